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


# A second held-out check (test only): ordinary field values of the same hard kinds, written before
# the generators below. Its failures under the previous model were seen before the generators were
# finished, so like HN_TEMPLATES' odd half it is not a blind test, only a template-level one.
HN_FRESH_TEMPLATES = [
    "{f} {a}-smith", "o'reilly media, inc.", "it's not a bug, it's a feature", "select your country: ireland",
    "please don't drop the box", "union square, san francisco", "update: the order shipped today",
    "5 > 3 but 2 < 4", "x >= {n}", "{n} <= y <= {m}", "save up to {n}% on {w}s!", "€{n},{c}{c}",
    "{n}.{c}{c} usd", "-{n}%", "{n}/{m}", "1 + 1 = 2", "a or b, not both", "null pointer exception at line {n}",
    "table for {n}, please", "join our team!", "i'll be there at {n}:{c}0", "he said 'hello' and left",
    "\"{w}\" -- {f}", "#{n}: {w} and {w}", "where are you from?", "from {n} to {m} pm", "order #{n}-{m}",
    "case {n}: closed", "sleep tracker v{n}", "max {n} items per order", "count me in!", "version {n} (beta)",
    "{f}@{w}.com", "{f}'s {w}: 'great'", "love it; would buy again", "drop shipping", "exec. director",
    "values: honesty, trust", "having a great time in {w}!", "desc: red {w}, size {n}", "like {n} times",
    "between you and me", "delete my account please", "insert coin", "all or nothing",
    "it's {n}\u00b0c today", "caf\u00e9 d\u00e9j\u00e0 vu", "if (x < {n}) {{ y = {m}; }}", "f(x) = x^2 + {n}",
    "{w}_id = {n}",
]


# A third group, for calibration only (never trained or tested on): the operating point must keep
# hard benign values like these mostly unflagged, not just ordinary traffic.
HN_CALIB_TEMPLATES = [
    "{f} {a}'s birthday party", "{a} & {a} solicitors", "{f}'s {w} isn't working", "where's my {w}? order #{n}",
    "select {w}s: {n}, {m}", "drop-down shows '{w}' twice", "please update {f}'s {w} to {n}", "union jack {w}",
    "the {w} table is too small", "my {w} was deleted, can you restore it?", "insert tab a into slot b",
    "joined on {n}/{c}/20{c}{c}", "5' {c}\" and {m} lbs", "{n} < x", "y > {m}", "x = y + {n}", "a + b = c",
    "{n} - {m} = ?", "(1 + 2) * {c}", "{n}% more {w}s", "only ${n}!", "{n} for ${m}", "vat {n}%", "-${n}.{c}{c}",
    "1 or 2 {w}s please", "{n} and {m} are both fine", "or best offer", "and more!", "not sure", "null",
    "n/a or none", "true or false?", "{w} = null", "if {w} is empty, leave blank", "sleep mode",
    "version: {n}.{c}.{c}", "char limit: {m}", "count: {n}", "max. {n} {w}s", "exec chef",
    "benchmark results for {w} v{n}", "waitfor it...", "select-all", "having said that, the {w} is fine",
    "--{f}", "{f} -- {a}", "#{n} {w}", "'{w}' or '{w}'", "\"{w}\" and \"{w}\"", "{f} said: \"don't\"",
    "it's {f}'s", "ain't it", "{w} (#{n})", "{w}; {w}; {w}", "<b>{w}</b>", "x < y > z", "1/2 < 3/4",
    "{n}\u00b0f", "\u00fcn\u00efc\u00f6d\u00e9 {w}", "\u65e5\u672c {n}", "{f} {a} (ext. {n})",
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
    """`split`: "train" (even HN_TEMPLATES), "test" (odd HN_TEMPLATES), "fresh" (HN_FRESH_TEMPLATES,
    test) or "calib" (HN_CALIB_TEMPLATES)."""
    rng = random.Random(seed)
    if split in ("fresh", "calib"):
        tmpls = HN_FRESH_TEMPLATES if split == "fresh" else HN_CALIB_TEMPLATES
    else:
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


# --- hard benign field values by kind (training only) ------------------------------------------
# Written as small grammars, not fixed sentences, so that the model learns the kind (prose that uses
# SQL words, code and arithmetic, prices, names with apostrophes) rather than a handful of strings.
# Anything that fully matches a test template (odd HN_TEMPLATES, HN_FRESH_TEMPLATES) is dropped,
# so no instance of a held-out template is ever trained on.

SQL_WORDS = ["select", "union", "join", "where", "from", "order", "group", "having", "insert", "update",
             "delete", "drop", "table", "null", "like", "sleep", "char", "count", "max", "min", "exec",
             "values", "between", "case", "end", "limit", "set", "declare", "version", "user", "database",
             "schema", "column", "index", "key", "true", "false", "all", "any", "exists", "top", "desc",
             "asc", "waitfor", "delay", "benchmark", "concat", "cast", "convert", "if", "begin", "commit",
             "rollback", "grant", "load", "file", "dump", "execute", "procedure", "trigger", "view",
             "create", "alter", "truncate", "replace", "merge", "distinct", "offset", "fetch", "rows"]
NOUNS = ["box", "order", "table", "chair", "ticket", "seat", "room", "account", "song", "list", "file", "team",
         "report", "menu", "photo", "cart", "parcel", "form", "book", "class", "game", "key", "door", "car",
         "delivery", "invoice", "size", "colour", "version", "update", "union", "record", "case", "set", "user",
         "values", "index", "schema", "column", "view", "trigger", "count", "limit", "character", "bank", "shop"]
PRON = ["i", "we", "you", "they", "he", "she", "it", "my wife", "our team", "the kids", "nobody", "everyone"]
CONTR = ["i'd", "i'm", "i'll", "i've", "we'd", "we're", "we'll", "you'd", "you're", "they're", "he's", "she's",
         "it's", "that's", "there's", "let's", "don't", "can't", "won't", "isn't", "wasn't", "didn't",
         "shouldn't", "couldn't", "wouldn't", "who's", "what's", "where's"]
VERBS = ["select", "order", "update", "delete", "drop", "join", "insert", "union", "sleep", "count", "group",
         "set", "load", "grant", "execute", "replace", "merge", "fetch", "create", "alter", "like", "book",
         "find", "get", "see", "pick", "change", "move", "send", "keep", "check", "add", "use", "cancel"]
ADJ = ["new", "old", "red", "big", "small", "full", "empty", "late", "early", "free", "null", "true", "false",
       "top", "max", "main", "final", "open", "closed", "void", "best", "last", "first", "next", "tired"]
PREP = ["from", "to", "in", "at", "on", "by", "with", "for", "into", "between", "after", "before", "where", "when"]
DET = ["the", "a", "my", "your", "our", "this", "that", "all", "any", "every", "some", "no"]
CONJ = ["and", "or", "but", "and/or", "&", "nor", "then", "so"]
MORE_APOS = ["o'neill", "o'grady", "o'mahony", "o'shea", "o'rourke", "o'callaghan", "d'artagnan", "d'costa",
             "d'almeida", "l'amour", "l'estrange", "de'ath", "m'baye", "n'golo", "t'challa", "ka'ahumanu",
             "o'flaherty", "o'dwyer", "d'onofrio", "dell'orto", "sant'angelo", "all'arrabbiata", "ma'am",
             "ng'ang'a", "o'kane", "o'higgins", "d'aubigny", "l'enfant", "o'driscoll", "o'halloran"]
MORE_FIRST = ["aoife", "niamh", "eoin", "padraig", "seamus", "brigid", "jean", "marie", "giulia", "marco", "ana",
              "jose", "fatima", "amir", "yuki", "chen", "olga", "ivan", "emma", "noah", "olivia", "james"]
VARS = ["a", "b", "c", "i", "j", "k", "n", "m", "p", "q", "t", "x", "y", "z", "total", "count", "idx", "price",
        "qty", "sum", "len", "result", "value", "score", "width", "height", "speed", "rate"]
FUNCS = ["abs", "sqrt", "floor", "ceil", "round", "len", "print", "min", "sum", "log", "sin", "cos", "exp",
         "range", "parseint", "avg", "mean", "pow", "str", "int", "float", "size", "get", "push", "f", "g", "h"]
OPS = ["<", ">", "<=", ">=", "==", "!=", "=", "<>", "+", "-", "*", "/", "%", "^"]
SCRIPTS = ["\u00e9\u00e8\u00ea\u00e0\u00e7\u00f4\u00fc\u00f6\u00e4\u00df\u00f1\u00ed\u00f3\u00fa",
           "\u0430\u0431\u0432\u0433\u0434\u0435\u0436\u0437\u0438\u043a\u043b\u043c\u043d\u043e\u043f",
           "\u03b1\u03b2\u03b3\u03b4\u03b5\u03b6\u03b7\u03b8\u03b9\u03ba\u03bb\u03bc",
           "\u05d0\u05d1\u05d2\u05d3\u05d4\u05d5\u05d6\u05d7\u05d8\u05d9\u05db\u05dc\u05de\u05e0",
           "\u0627\u0628\u062a\u062b\u062c\u062d\u062e\u062f\u0631\u0633\u0634\u0635\u0639\u0641",
           "\u65e5\u672c\u8a9e\u4e2d\u6587\u5b57\u5e97\u540d\u5927\u5b66\u6771\u4eac",
           "\u3042\u3044\u3046\u3048\u304a\u304b\u304d\u304f\u3053\u3055\u3057\u3059",
           "\uac00\ub098\ub2e4\ub77c\ub9c8\ubc14\uc0ac\uc544\uc790\ucc28"]


def _hb_prose(r: random.Random) -> str:
    """English with SQL words as ordinary words, contractions and light punctuation."""
    n = lambda: str(r.randint(1, 999))  # noqa: E731
    forms = [
        lambda: f"{r.choice(CONTR)} {r.choice(['like to', 'need to', 'want to', 'have to', ''])} {r.choice(VERBS)} {r.choice(DET)} {r.choice(NOUNS)}",
        lambda: f"{r.choice(PRON)} {r.choice(['will', 'can', 'must', 'should', 'did', 'may'])} {r.choice(VERBS)} {r.choice(DET)} {r.choice(NOUNS)} {r.choice(PREP)} {r.choice(DET)} {r.choice(NOUNS)}",
        lambda: f"please {r.choice(VERBS)} {r.choice(DET)} {r.choice(NOUNS)}{r.choice(['', '.', '!', ', thanks', ' asap'])}",
        lambda: f"{r.choice(VERBS)} {r.choice(['when', 'if', 'until', 'after'])} {r.choice(ADJ)}",
        lambda: f"{r.choice(NOUNS)} {r.choice(CONJ)} {r.choice(NOUNS)}",
        lambda: f"{r.choice(PRON)} {r.choice(CONJ)} {r.choice(PRON)}",
        lambda: f"{r.choice(ADJ)} {r.choice(CONJ)} {r.choice(ADJ)}",
        lambda: f"is {r.choice(SQL_WORDS)} {r.choice(ADJ)}?",
        lambda: f"how do i {r.choice(VERBS)} {r.choice(DET)} {r.choice(NOUNS)}?",
        lambda: f"{r.choice(SQL_WORDS)} {r.choice(NOUNS)}",
        lambda: f"{r.choice(NOUNS)} {r.choice(SQL_WORDS)}",
        lambda: f"{r.choice(SQL_WORDS)} {r.choice(['me', 'it', 'them', 'us', 'him', 'her'])}",
        lambda: f"the {r.choice(NOUNS)} of {r.choice(NOUNS)} {n()}",
        lambda: f"{r.choice(CONTR)} {r.choice(ADJ)}, {r.choice(CONTR)} {r.choice(ADJ)}",
        lambda: f"{r.choice(PRON)} {r.choice(VERBS)} {r.choice(['it', 'them', 'everything', 'nothing'])} -- {r.choice(ADJ)}",
        lambda: f"\"{r.choice(SQL_WORDS)}\" {r.choice(['means', 'is', 'is not'])} {r.choice(ADJ)}",
        lambda: f"'{r.choice(NOUNS)}' {r.choice(CONJ)} '{r.choice(NOUNS)}'",
        lambda: " ".join(r.choice(SQL_WORDS + NOUNS + ADJ + PREP + DET + CONJ) for _ in range(r.randint(2, 9))),
    ]
    return r.choice(forms)().replace("  ", " ")


def _hb_names(r: random.Random) -> str:
    f, a = r.choice(FIRST + MORE_FIRST), r.choice(APOS_LAST + MORE_APOS)
    forms = [f"{a}", f"{f} {a}", f"{a} {f}", f"{f} {a} jr.", f"{a}'s", f"the {a} family", f"{a}, {f[0]}.",
             f"{f[0]}. {a}", f"dr. {a}", f"{a} & {r.choice(['sons', 'co.', 'partners'])}", f"{f}-{a}",
             f"{f} {r.choice(MORE_FIRST)} {a}", f"{a} {r.choice(['st', 'road', 'pub', 'bakery', 'ltd'])}",
             f"c/o {f} {a}", f"mr {a}", f"{a}-{r.choice(APOS_LAST + MORE_APOS)}"]
    return r.choice(forms)


def _hb_code_math(r: random.Random) -> str:
    """Arithmetic, comparisons and code fragments: `=` and `<`/`>` without any SQL around them."""
    v, v2 = r.choice(VARS), r.choice(VARS)
    n, m, k = r.randint(0, 999), r.randint(0, 999), r.randint(1, 99)
    op = r.choice(OPS)
    decl = r.choice(["var ", "int ", "const ", "float ", "my $", "auto ", "double ", ""])
    forms = [
        f"{v} {op} {n}", f"{v}{op}{n}", f"{n} {op} {m}", f"{n}{op}{m}", f"{v} {op} {v2}",
        f"{decl}{v} = {n};", f"{decl}{v} = {n}; {v2} = {m};", f"{v} += {k};", f"{v}++", f"{v} = {v2} {op} {n}",
        f"{v} = {n} * ({v2} - {m})", f"for (i = 0; i < {n}; i++)", f"while ({v} {r.choice(OPS[:6])} {n})",
        f"if ({v} {r.choice(OPS[:6])} {n}) return {m};", f"return {v} {r.choice(OPS[:6])} {n};",
        f"{v} < {n} && {v2} > {m}", f"{n} < {v} < {m}", f"{r.choice(FUNCS)}({v})", f"{r.choice(FUNCS)}({v}, {n})",
        f"{r.choice(FUNCS)}({n}) = {m}", f"{v}({v2}) = {k}{v2} + {n}", f"{v}^2 + {k}{v} - {n} = 0",
        f"{n} + {m} = {n + m}", f"{n} - {m} = {n - m}", f"{n} * {k} = {n * k}", f"{n}/{k}", f"({n} + {m}) / {k}",
        f"{k}{v} + {n} = {m}", f"solve {k}{v} {r.choice(['+', '-'])} {n} = {m}", f"{v}[{k}] = {n}",
        r.choice(["});", "}}();", "})();", "});});", "}", "{}", "();", "]);", "})", "}},", "return false;",
                  "function() {", "$(function() {", "}, false);", "return true;", "else {", "} else {", "};"]),
        f"console.log({v});", f"print({v} {op} {n})", f"{v} = [{n}, {m}, {k}]", f"{{\"{v}\": {n}}}",
        f"{v} is {r.choice(['null', 'none', 'nil', 'true', 'false', 'undefined'])}",
    ]
    return r.choice(forms)


def _hb_numbers(r: random.Random) -> str:
    """Numbers joined by words, prices, percentages, measurements, ids."""
    n, m, k, c = r.randint(1, 999), r.randint(1, 9999), r.randint(2, 99), r.randint(0, 99)
    noun = r.choice(NOUNS)
    cur = r.choice(["$", "\u20ac", "\u00a3", "usd ", "eur ", "gbp ", "chf ", "\u00a5"])
    forms = [
        f"{n} and {m} {noun}s", f"{noun}s {n} and {m}", f"{n}, {m} and {k}", f"{n} or {m} {noun}s",
        f"either {n} or {m}", f"{n} to {m}", f"{n} and up", f"between {n} & {m}", f"{n} and {k} more",
        f"{n} {r.choice(SQL_WORDS)}s", f"{r.choice(SQL_WORDS)} {n}", f"{r.choice(SQL_WORDS)} #{n}", f"{r.choice(SQL_WORDS)}-{n}",
        f"{r.choice(SQL_WORDS)} {n}{r.choice(['kg', 'ml', 'px', 'mb', '%', 'x', 'pcs'])}",
        f"{r.choice(SQL_WORDS)} no. {n}", f"{r.choice(SQL_WORDS)} v{n}.{c}", f"{noun} {n} of {m}",
        f"{cur}{n}.{c:02d}", f"{n},{c:02d} {cur.strip()}", f"{cur}{m:,}.{c:02d}", f"{n}% off", f"-{k}%",
        f"up to {k}% off {noun}s", f"{k}.{c % 10}% apr", f"save {cur}{n}", f"{k}% of {m}", f"+{k}%",
        f"{k}-{k + r.randint(1, 30)}%", f"was {cur}{n}, now {cur}{max(1, n - k)}", f"{k} x {cur}{n}.{c:02d}",
        f"price: {n}.{c:02d}", f"{n}\" x {k}\"", f"{k}' {r.randint(0, 11)}\"", f"{n}cm x {m}cm",
        f"{n} ft {r.randint(0, 11)} in", f"{n}x{m}", f"{n}-{m}-{k}", f"#{n}-{m}", f"no. {n}/{k}",
        f"{n} {r.choice(['and', 'or', '&', '+'])} {m} {r.choice(['days', 'years', 'items', 'nights', 'people'])}",
        f"{n} {r.choice(['<', '>', '<=', '>='])} {m}", f"{m:,}", f"{m} {r.choice(['=', ':'])} {k} x {m // k}",
    ]
    return r.choice(forms)


def _hb_foreign(r: random.Random) -> str:
    """Non-ASCII words (several scripts), sometimes with numbers or brackets."""
    sc = r.choice(SCRIPTS)
    word = lambda: "".join(r.choice(sc) for _ in range(r.randint(2, 8)))  # noqa: E731
    forms = [word(), f"{word()} {word()}", f"{word()} ({r.randint(0, 99)})", f"{word()} {r.randint(1, 999)}",
             f"{r.choice(FIRST)} {word()}", f"{word()}, {word()} {word()}", f"\u200b{word()}", "\u200b",
             f"{word()}'s {r.choice(NOUNS)}", f"\u00ab{word()}\u00bb", f"{word()} - {word()}"]
    return r.choice(forms)


def _hb_markup(r: random.Random) -> str:
    """Rich-text field content: HTML tags, links, markdown."""
    text = _hb_prose(r)
    tag = r.choice(["p", "b", "i", "em", "strong", "li", "td", "th", "span", "div", "h2", "h3", "dd", "dt", "code"])
    attr = r.choice(["", f' class="{r.choice(NOUNS)}"', f' id="{r.choice(NOUNS)}{r.randint(1, 99)}"',
                     f' title="{text}"', ' style="color:red"', ' role="banner"'])
    forms = [f"<{tag}{attr}>{text}</{tag}>", f"<{tag}{attr}>", f"</{tag}>", f"<{tag}/>", "<br/>", "<hr/>", "<br>",
             f'<a href="/{r.choice(NOUNS)}/{r.choice(NOUNS)}_{r.choice(ADJ)}"{attr}>{text}</a>',
             f'<img src="/img/{r.choice(NOUNS)}.png" alt="{text}">', f"<ul><li>{text}</li></ul>",
             f"**{text}**", f"*{text}*", f"# {text}", f"- {text}", f"| {r.choice(NOUNS)} | {r.randint(1, 999)} |",
             f"[{text}](https://example.com/{r.choice(NOUNS)})", f"`{r.choice(SQL_WORDS)}`", f"> {text}"]
    return r.choice(forms)


_HB_KINDS = [_hb_prose, _hb_prose, _hb_names, _hb_code_math, _hb_code_math, _hb_numbers, _hb_numbers,
             _hb_foreign, _hb_markup]


def template_regex(templates: list[str]) -> re.Pattern:
    """One regex matching the runtime view of any instance of any of `templates`."""
    slots = {"f": "|".join(map(re.escape, FIRST)), "a": "|".join(map(re.escape, APOS_LAST)),
             "w": "|".join(map(re.escape, WORDS)), "n": r"-?\d+", "m": r"-?\d+", "c": r"\d"}
    parts = []
    for t in templates:
        marked = runtime_view(t.format(**{k: f"qq{k}qq" for k in slots}))
        rx = re.escape(marked)
        for k, p in slots.items():
            rx = rx.replace(f"qq{k}qq", f"(?:{p})")
        parts.append(rx)
    return re.compile("|".join(f"(?:{p})" for p in parts))


def hard_benign(count: int, seed: int) -> list[str]:
    """`count` distinct generated hard benign field values (runtime view), none of them an instance
    of a test template."""
    rng = random.Random(seed)
    held_out = template_regex([HN_TEMPLATES[i] for i in range(1, len(HN_TEMPLATES), 2)] + HN_FRESH_TEMPLATES)
    out = set()
    tries = 0
    while len(out) < count and tries < count * 20:
        tries += 1
        t = rng.choice(_HB_KINDS)(rng)
        if rng.random() < 0.2:
            t = t.title() if rng.random() < 0.5 else t.upper()
        t = runtime_view(t)
        if t and not held_out.fullmatch(t):
            out.add(t)
    return sorted(out)


# --- attacker side: boolean-condition payloads with varied constants (training only) ----------------
# The payload lists spell most conditions with the constants 1=1 / 'a'='a'; real injections use
# any constants, so the model is shown the shape (break-out, boolean operator, comparison,
# comment) with random numbers, strings, spacing and trailing comment text. Textbook forms only;
# nothing is taken from the sqlmap templates, whose output is the attack test set.
# (Case mixing, inline comments and %-encoding need no augmentation: the runtime view undoes them.)

_ATK_PREFIX = ["", "", "'", "'", "\"", ")", "')", "\")", "'))", "))", "{n}", "{n}'", "{n})", "-{n}", "-{n}'",
               "{s}'", "{s}\"", "{s}')", "`", "%'", "{n}' "]
_ATK_BOOL = ["and", "or", "or not", "and not", "having", "where {n}={n} and", "xor", "&&", "||", "rlike"]
_ATK_COND = ["{n}={n}", "{n}={m}", "{n} = {m}", "{n}<>{m}", "{n}>{m}", "{n}<{m}", "{n}!={m}", "'{s}'='{s}",
             "'{s}'='{t}", "\"{s}\"=\"{s}\"", "{n} like {n}", "'{s}' like '{s}'", "{n} between {n} and {m}",
             "({n}={n})", "({n}={m})", "{n} in ({n},{m})", "(select {n})={n}", "{n}=(select {n})",
             "(select count(*) from {tab})>{k}", "ascii(substring(({q}),{k},1))>{n}", "length(({q}))>{k}",
             "sleep({k})", "{n}=(select {n} from pg_sleep({k}))", "benchmark({m},md5({k}))", "ord(mid(({q}),{k},1))>{n}",
             "exists(select * from {tab})", "{n}={n}-- ", "true", "not false"]
_ATK_SUFFIX = ["", "", "-- ", "-- -", "--+", "--", "#", "-- {j}", "#{j}", "# {j}", ";--", ";#", "/*",
               " and '{s}'='{s}", " or '{s}'='{s}", " and ({n}={n}", ")-- ", "')-- ", " limit 1-- ",
               " order by {k}-- ", " and '{s}' like '{s}"]
# Stacked queries: a statement terminator, then a statement of its own.
_ATK_STACKED = ["drop table {tab}", "drop table if exists {tab}", "delete from {tab}", "delete from {tab} where {n}={n}",
                "truncate table {tab}", "insert into {tab} values({n},'{s}')", "update {tab} set {s}='{t}'",
                "update {tab} set {s}={n} where {n}={n}", "shutdown", "exec xp_cmdshell '{s}'",
                "exec master..xp_cmdshell '{s}'", "waitfor delay '0:0:{k}'", "select pg_sleep({k})", "select sleep({k})",
                "declare @{s} int", "create table {s}({t} int)", "alter table {tab} drop column {s}",
                "grant all on {tab} to {s}", "select * from {tab}", "select {n}", "commit", "rollback"]
_ATK_TABLES = ["users", "admin", "information_schema.tables", "mysql.user", "sysobjects", "all_tables",
               "pg_user", "sqlite_master", "members", "accounts", "dual"]
_ATK_QUERIES = ["select user()", "select database()", "select version()", "select @@version",
                "select password from users limit 1", "select table_name from information_schema.tables limit 1",
                "select banner from v$version where rownum=1", "select name from sysobjects"]


def attack_variants(count: int, seed: int) -> list[str]:
    """`count` distinct injection values (runtime view): boolean conditions, a quarter stacked queries."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    word = lambda lo, hi: "".join(rng.choice(letters) for _ in range(rng.randint(lo, hi)))  # noqa: E731
    out = set()
    tries = 0
    while len(out) < count and tries < count * 20:
        tries += 1
        n = rng.choice([rng.randint(0, 9), rng.randint(10, 99), rng.randint(100, 9999)])
        slots = {"n": n, "m": rng.randint(0, 9999), "k": rng.randint(1, 30), "s": word(1, 5), "t": word(1, 5),
                 "j": word(1, 6), "tab": rng.choice(_ATK_TABLES), "q": rng.choice(_ATK_QUERIES)}
        fill = lambda x: x.format(**slots)  # noqa: E731
        prefix = fill(rng.choice(_ATK_PREFIX))
        if rng.random() < 0.25:
            end = rng.choice(["", "", ";", "--", "-- ", "#", ";--"])
            t = f"{prefix}{rng.choice([';', '; ', ' ; '])}{fill(rng.choice(_ATK_STACKED))}{end}"
        else:
            # After a quote or bracket the space is optional (`'or 1=1`).
            sep = "" if prefix[-1:] in ("'", '"', ")", "`") and rng.random() < 0.4 else " "
            t = f"{prefix}{sep}{fill(rng.choice(_ATK_BOOL))} {fill(rng.choice(_ATK_COND))}{fill(rng.choice(_ATK_SUFFIX))}"
        t = runtime_view(t)
        if len(t) >= 4:
            out.add(t)
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
