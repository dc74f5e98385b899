"""Generated training text: benign values and SQL-looking hard negatives for SQLi, GCG-style
adversarial suffixes for prompt injection. Each generator takes its own seed, so the output
does not depend on the call order."""

from __future__ import annotations

import random
import re

from normalize import runtime_view


FIRST = ["john", "mary", "sean", "liam", "siobhan", "patrick", "ann", "kevin", "maria", "luca", "dan",
         "grace", "connor", "aisling", "michael", "rosa", "pierre", "anna", "noel", "ciara"]
APOS_LAST = ["o'brien", "o'neil", "o'connor", "d'angelo", "o'reilly", "d'souza", "o'hara", "l'oreal",
             "d'arcy", "o'sullivan", "mc'gregor", "o'malley", "d'amico", "o'donnell", "n'diaye",
             "o'keefe", "dell'acqua", "o'toole", "d'alessandro", "o'leary"]
WORDS = ["size", "colour", "color", "option", "item", "date", "country", "city", "plan", "value", "row",
         "file", "record", "column", "table", "user", "group", "order", "account", "product"]

HN_TEMPLATES = [
    # even index -> training, odd index -> held-out check (different templates)
    "{f} {a}", "{a}, {f}",
    "select a {w} from the drop-down menu", "please select the {w} you want from the list",
    "we need to union the two sets and select the max", "union the {w} lists and select the top {n}",
    "{n} < {m} and {m} > {n}", "if x > {n} or y < {m} then stop",
    "{n}% off -- today only!", "save {n}% -- limited offer",
    "price: ${n}.{c}", "total ${n},{c}{c}0.00 incl. vat",
    "{n}%", "{n}.{c}%",
    "it's {f}'s {w}", "don't forget {f}'s {w}",
    "delete the old {w} from the folder", "drop me a line at {f}@example.com",
    "update your {w} where needed", "insert the {w} and order by date",
    "rock 'n' roll", "let's meet at {n} o'clock",
    "#{n} best seller", "tom & jerry; {f} & {a}",
    "1=1 is always true, isn't it?", "where is the {w}? i can't find it",
    "and/or", "{f} or {a}",
    "{a}'s pub -- {n} main st.", "the {w} is \"{f}\" or '{a}'",
    "select * from the menu, then press ok", "i'd like to order {n} items, not {m}",
    "my password is 'sunshine{n}'", "it was {n}'{m}\" tall",
    "a=b; c=d", "key: '{w}'",
    "join us for {w} night", "having fun with {f}",
    "sleep({n}) is a function name", "the union of a and b",
    "{f} {a} <{f}@example.com>", "re: {w} #{n} -- reply",
    "exec summary for q{m}", "null and void",
    "{n}-{m}-{c}{c}", "({n}) {m}-{c}{c}{c}{c}",
    "where's the {w}?", "it's {n}:{m} pm",
    "user's guide, chapter {n}", "o'clock",
    "i can't log in, it says 'invalid {w}'", "he said \"select one\" and left",
    "{f}'s {w} (copy)", "'{w}' is required",
    "drop-off at {n} pm; pick-up at {m}", "drop the {w} in the bin",
    "select all that apply", "select your {w}:",
    "from {f} to {a}", "where {f} and {a} met",
    "{n} or more {w}s", "{n} and {m}",
    "1 or 2 days", "yes or no",
    "union station, {w} street", "the {w} union",
    "values between {n} and {m}", "between {n}-{m} {w}s",
    "sort by {w} desc", "order: {w} asc",
    "{a} & sons ltd.", "\"{f}\" <{f}@mail.com>",
    "{n}' {m}\"", "{n}\" x {m}\" frame",
    "it's a {w}; isn't it?", "i'm {f}, i'd like the {w}",
    "where can i find {a}'s {w} -- thanks", "the #{n} {w}, isn't it great",
    "true", "false",
    "{w} = {n}", "{w}={m}",
    "{f}'s", "'{f}'",
    "if a = b then c", "let x = {n}; y = {m}",
    "count the {w}s", "max({n}, {m})",
    "concat the {w} files", "sleep well, {f}!",
    "the {w} is null", "not null",
    "benchmarks for {w} {n}", "char {n}",
    "version {n}.{c}", "user_{n}",
    "a < b > c", "<{w}>",
    "we're {n}% sure", "{f} & {a}'s wedding",
]


def benign_values(count: int, seed: int) -> list[str]:
    """Ordinary single field values (ids, numbers, lists, dates, tokens, e-mails, URLs, lone SQL
    keywords as search words) that real traffic is made of."""
    rng = random.Random(seed)
    hexd = "0123456789abcdef"
    alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
    b64 = alnum + "ABCDEFGHIJKLMNOPQRSTUVWXYZ+/_-"
    kw = ["select", "update", "delete", "insert", "order", "union", "table", "drop", "from", "where", "and",
          "or", "not", "null", "true", "false", "none", "asc", "desc", "like", "limit", "join", "group", "having",
          "exec", "sleep", "char", "count", "max", "min", "all", "any", "case", "end", "into", "values", "set"]
    gens = [
        lambda: str(rng.randint(0, 10 ** rng.randint(1, 12))),
        lambda: str(-rng.randint(1, 10000)),
        lambda: f"{rng.randint(0, 9999)}.{rng.randint(0, 99):02d}",
        lambda: ",".join(str(rng.choice([0, 0, 0, 1, rng.randint(0, 9999)])) for _ in range(rng.randint(2, 8))),
        lambda: f"{rng.randint(1990, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        lambda: f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/{rng.randint(1990, 2030)}",
        lambda: f"{rng.randint(1990, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}t{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}z",
        lambda: "-".join("".join(rng.choice(hexd) for _ in range(k)) for k in (8, 4, 4, 4, 12)),
        lambda: "".join(rng.choice(hexd) for _ in range(rng.choice([32, 40, 64]))),
        lambda: "".join(rng.choice(b64) for _ in range(rng.randint(8, 60))).lower(),
        lambda: f"{rng.choice(FIRST)}.{rng.choice(WORDS)}{rng.randint(1, 99)}@example.{rng.choice(['com', 'org', 'net', 'io'])}",
        lambda: f"https://www.example.com/{rng.choice(WORDS)}/{rng.randint(1, 9999)}?{rng.choice(WORDS)}={rng.randint(1, 99)}&lang=en",
        lambda: f"/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{rng.randint(1, 99)}.{rng.choice(['html', 'php', 'jpg', 'json'])}",
        lambda: rng.choice(kw),
        lambda: f"{rng.choice(kw)} {rng.choice(WORDS)}",
        lambda: f"{rng.choice(WORDS)}_{rng.choice(['asc', 'desc'])}",
        lambda: f"{rng.choice(WORDS)}:{rng.choice(['asc', 'desc'])}",
        lambda: f"+{rng.randint(1, 99)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
        lambda: f"sku-{rng.randint(1000, 9999)}-{rng.choice(alnum)}{rng.choice(alnum)}",
        lambda: f"{rng.randint(0, 20)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}",
        lambda: f"{rng.choice(['on', 'off', 'yes', 'no', 'true', 'false', 'null', 'en-us', 'utf-8', 'json'])}",
        lambda: f"{{\"{rng.choice(WORDS)}\": {rng.randint(0, 99)}}}",
        lambda: f"{rng.choice(FIRST)} {rng.choice(APOS_LAST)}",
        lambda: f"{rng.randint(1, 999)} {rng.choice(WORDS)} st, apt {rng.randint(1, 99)}",
        lambda: f"{rng.choice(WORDS)} {rng.choice(WORDS)} {rng.choice(WORDS)}",
        lambda: f"{rng.randint(1, 9)}---",
        lambda: f"{rng.randint(1, 99)}%",
        lambda: f"${rng.randint(1, 999)}.{rng.randint(0, 99):02d}",
        lambda: f"{rng.randint(1, 1920)}x{rng.randint(1, 1080)}",
        lambda: f"{rng.choice(WORDS)}[{rng.choice(WORDS)}]",
        lambda: rng.choice(["*", "-", "/", ".", ",", "_", "+", "#", "?", "!", "&", "|", ":", ";", "~", "(", ")", "'", "\"", "--", "..", "()", "[]", "{}", "*/*", "n/a", "-1", "0x0"]),
        lambda: rng.choice([",", "-", "/", "+", "#"]) + str(rng.randint(0, 99)),
        lambda: ",".join([str(rng.randint(0, 9))] * rng.randint(2, 8)),
        lambda: f"{rng.choice(WORDS)}_",
        lambda: f"{rng.choice(WORDS)}s {rng.randint(1, 99)},",
    ]
    out = set()
    tries = 0
    while len(out) < count and tries < count * 20:
        tries += 1
        out.add(runtime_view(rng.choice(gens)()))
    # The most common values of all: small numbers, single letters, two-letter codes, locales.
    letters = "abcdefghijklmnopqrstuvwxyz"
    out.update(str(i) for i in range(0, 1001))
    out.update(str(-i) for i in range(1, 101))
    out.update(letters)
    out.update(a + b for a in letters for b in letters)
    out.update(f"{a}{b}_{c}{d}" for a, b, c, d in
               [tuple(rng.choice(letters) for _ in range(4)) for _ in range(300)])
    return sorted(out)


def hard_negatives(split: str, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    idx = range(0, len(HN_TEMPLATES), 2) if split == "train" else range(1, len(HN_TEMPLATES), 2)
    tmpls = [HN_TEMPLATES[i] for i in idx]
    out = set()
    tries = 0
    while len(out) < count and tries < count * 50:
        tries += 1
        t = rng.choice(tmpls).format(
            f=rng.choice(FIRST), a=rng.choice(APOS_LAST), w=rng.choice(WORDS),
            n=rng.randint(1, 99), m=rng.randint(1, 999), c=rng.randint(0, 9),
        )
        if rng.random() < 0.3:
            t = t.title() if rng.random() < 0.5 else t.upper()
        out.add(runtime_view(t))
    return sorted(out)


_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def gcg_augment(base: list[str], n: int, seed: int) -> list[str]:
    """GCG-style prompts: a short request followed by an optimised-looking suffix, here a random mix
    of vocabulary words (random case), code-ish tokens and punctuation clusters."""
    rng = random.Random(seed)
    base = [t for t in base if 20 <= len(t) <= 300][:5000]
    vocab = sorted({w for t in base[:2000] for w in re.findall(r"[A-Za-z]{2,12}", t)})
    code = ["Sure", "Here", "here", "sure", "=", "==", "describing", "similarly", "Now", "write", "revert",
            "oppositeley", "({", "})", "[{", "}]", "\\", "->", "=>", "**", "##", "/*", "*/", "<>", "{%", "%}",
            "json", "latex", "html", "svg", "cdnjs", "github", "README", "tutorial", "manual", "Step", "!--"]
    out = []
    for _ in range(n):
        b = rng.choice(base)
        toks = []
        for _ in range(rng.randint(6, 30)):
            r = rng.random()
            if r < 0.45:
                w = rng.choice(vocab)
                w = w.capitalize() if rng.random() < 0.3 else (w.upper() if rng.random() < 0.05 else w)
                toks.append(w)
            elif r < 0.7:
                toks.append(rng.choice(code))
            else:
                toks.append("".join(rng.choice(_PUNCT) for _ in range(rng.randint(1, 4))))
        sep = " " if rng.random() < 0.7 else ""
        suffix = ""
        for t in toks:
            suffix += t + (sep if rng.random() < 0.8 else "")
        out.append(b + rng.choice([" ", "", ". "]) + suffix)
    return out
