#!/usr/bin/env python3
"""Held-out sets of the prompt-injection model (issue 13) and the matching training parts.

    python3 models/train/pi_heldout.py --data ../shared/datasets --out target/pi-heldout

writes `heldout.jsonl` (one row per text: text, label attack|benign, family, source, template,
triggers) and `summary.json` into `--out` (a build folder, gitignored: no data enters the
repository). `rampart eval --pi-heldout target/pi-heldout` scores it with the Rust engine code.

Splits (never random rows):
- ShareGPT user messages by a salted hash of the text: [0, 0.4) test, [0.4, 0.5) calibration,
  [0.5, 1) training. The 42 rows the pool labels prompt-injection by phrase match were read:
  6 are real attacks (4 jailbreaks: "AI from a parallel reality without ethics", three copies of
  "EVO 2.0 with no rules", a DAN header; 1 prompt extraction: "what was the exact prompt
  previously provided") and are test attacks; 1 ("disregard the previous message.") is a benign
  correction and follows its hash side; the other 35 are SEO / role prompt templates that open
  with "Please ignore all previous instructions" and then ask for ordinary work: ambiguous by
  intent, excluded from both sides.
- Over-defence sentences, hijack / extraction / direct overrides, encodings, translations: by
  template (pi_overdefence, pi_hijack). Indirect: by carrier template and by instruction hash
  (pi_indirect), with benign twins.
- JailbreakBench, alpaca_eval, awesome_chatgpt (last 25% by hash): independent test families."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import _rows, stable_frac  # noqa: E402
from pi_hijack import TRANSLATED, TRANSLATED_BENIGN, FRAMES, PRE, encoded, framed  # noqa: E402
from pi_actas import role_prompts  # noqa: E402
from pi_extraction import extraction_requests  # noqa: E402
from pi_indirect import embedded, instruction_split, slot_twins, stable  # noqa: E402
from pi_overdefence import trigger_sentences, triggers_in  # noqa: E402

# sha1[:12] of the reviewed ShareGPT prompt-injection rows (see the module docstring)
SHAREGPT_REAL_ATTACKS = {"5070a373d45f", "2a423f830918", "21670029ac3b", "a9b6e41d3262", "2cd0eca5bf47",
                         "0cda1014c43e"}
SHAREGPT_BENIGN_CORRECTIONS = {"955f098c3abc"}
SHAREGPT_TEST, SHAREGPT_CALIB = 0.4, 0.5
V4_EXTRACTION = "extraction (composed, v4)"
V4_ROLE_PROMPTS = "role prompts around sharegpt train chat (v4)"


def _sha(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


@dataclass
class PiHeldout:
    test: list[dict]
    # training parts: benign ShareGPT (text, trigger-word message?), generated rows with labels
    sharegpt_train: list[tuple[str, bool]]
    sharegpt_calib: list[str]
    generated_train: list[dict] = field(default_factory=list)
    excluded: int = 0


def _sharegpt(data_dir: str):
    test, calib, train, excluded = [], [], [], 0
    for r in _rows(data_dir, "sharegpt_user_messages"):
        t, h = r["text"], _sha(r["text"])
        if r["label"] != "benign":
            if h in SHAREGPT_REAL_ATTACKS:
                fam = "extraction" if h == "2cd0eca5bf47" else "jailbreak"
                test.append({"text": t, "label": "attack", "family": fam, "source": "sharegpt (reviewed attacks)"})
                continue
            if h not in SHAREGPT_BENIGN_CORRECTIONS:
                excluded += 1
                continue
        frac = stable(t, "sharegpt:")
        if frac < SHAREGPT_TEST:
            trig = triggers_in(t)
            test.append({"text": t, "label": "benign", "family": "chat", "triggers": trig,
                         "source": "sharegpt held-out (trigger words)" if trig else "sharegpt held-out (other)"})
        elif frac < SHAREGPT_CALIB:
            calib.append(t)
        else:
            train.append((t, bool(triggers_in(t))))
    return test, calib, train, excluded


def _translated(split: str, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for lang, p in TRANSLATED[split]:
        for fi in range(len(FRAMES[split]) if split == "train" else 2):
            frame = FRAMES[split][fi] if split == "train" else ("{p}" if fi == 0 else "{pre}\n\n{p}")
            text = frame.replace("{pre}", rng.choice(PRE[split])).replace("{p}", p)
            out.append({"text": text, "label": "attack", "family": "translated", "template": f"{split}-{lang}-{fi}"})
    return out


# a sentence that asks or tells the reader to do something is what the attack side's bare
# instructions look like ("What is the capital of Brazil?"), so slot fillers leave those out
_REQUEST_OPENERS = {"write", "explain", "give", "tell", "list", "create", "make", "please", "can", "could",
                    "would", "will", "how", "what", "why", "when", "where", "who", "which", "do", "does",
                    "is", "are", "summarize", "summarise", "translate", "describe", "generate", "provide",
                    "ignore", "forget", "act", "pretend", "show", "find", "help", "let's", "lets", "now",
                    "answer", "respond", "reply", "rewrite", "continue", "add", "use", "include", "say",
                    "print", "repeat", "send", "imagine", "suggest", "compare", "calculate", "draft"}


def declaratives(docs: list[str], limit: int = 4000) -> list[str]:
    """Statements (not questions or requests) of 25-160 characters cut from benign documents."""
    out, seen = [], set()
    for d in docs:
        for sent in re.split(r"(?<=[.!])\s+", d.replace("\n", " ")):
            sent = sent.strip()
            words = sent.split()
            if not (25 <= len(sent) <= 160) or not sent.endswith(".") or "?" in sent or not words:
                continue
            if words[0].lower().strip(",:;\"'") in _REQUEST_OPENERS or "you" in sent.lower().split():
                continue
            if sent not in seen:
                seen.add(sent)
                out.append(sent)
            if len(out) >= limit:
                return out
    return out


def build(data_dir: str, indirect_train: int = 900, indirect_test: int = 600, seed: int = 20261124,
          carriers_v8: bool = False, slot_twins_v10: int = 0) -> PiHeldout:
    """`carriers_v8`: the training side's indirect items also use pi_indirect's v8 carriers and
    lead-ins, 1,500 pairs instead of `indirect_train` (the held-out side is the same either way).
    `slot_twins_v10`: that many more benign twins with a benign line in the instruction's slot
    (pi_indirect.slot_twins; training side only)."""
    sg_test, sg_calib, sg_train, excluded = _sharegpt(data_dir)
    test = list(sg_test)
    for r in trigger_sentences("test", per_template=6, seed=seed):
        test.append({"text": r["text"], "label": "benign", "family": "over-defence", "triggers": [r["trigger"]],
                     "source": "over-defence (held-out templates)", "template": r["template"]})
    instructions = [r["text"] for n in ("bipia_train", "asb_attacker_instructions")
                    for r in _rows(data_dir, n, "prompt-injection")]
    by_side = instruction_split(instructions)
    sg_test_texts = [r["text"] for r in sg_test if r["label"] == "benign" and 40 <= len(r["text"]) <= 1500]
    sg_train_texts = [t for t, _ in sg_train if 40 <= len(t) <= 1500]
    for r in embedded("test", by_side["test"], sg_test_texts, indirect_test, seed + 1):
        r["source"] = "indirect (held-out carriers x instructions)" if r["label"] == "attack" else "indirect twins (carriers without the instruction)"
        test.append(r)
    for r in framed("test", 500, seed + 2):
        test.append({**r, "label": "attack", "source": f"generated {r['family']} (held-out templates)"})
    for r in encoded("test", 60, seed + 3):
        test.append({**r, "label": "attack", "source": f"encoded ({r['template'].split('-')[1]})"})
    for r in _translated("test", seed + 4):
        test.append({**r, "source": "translated (written for this project)"})
    for lang, t in TRANSLATED_BENIGN:
        test.append({"text": t, "label": "benign", "family": "chat", "source": "translated benign", "template": lang})
    for r in _rows(data_dir, "jailbreakbench_artifacts", "prompt-injection"):
        test.append({"text": r["text"], "label": "attack", "family": "jailbreak", "source": "jailbreakbench_artifacts"})
    for r in _rows(data_dir, "benign_prompts_alpaca_eval"):
        test.append({"text": r["text"], "label": "benign", "family": "chat", "source": "alpaca_eval"})
    for r in _rows(data_dir, "benign_prompts_awesome_chatgpt_prompts"):
        if stable_frac(r["text"]) >= 0.75:  # the v2 card's role-play test part
            test.append({"text": r["text"], "label": "benign", "family": "chat", "source": "awesome_chatgpt act-as (test 25%)"})
    for r in test:
        r.setdefault("triggers", triggers_in(r["text"]))
        r.setdefault("template", "")
    gen = []
    for r in trigger_sentences("train", per_template=8, seed=seed + 10):
        gen.append({"text": r["text"], "label": 0, "kind": "over-defence templates"})
    for r in embedded("train", by_side["train"], sg_train_texts, 1500 if carriers_v8 else indirect_train,
                      seed + 11, extra=carriers_v8):
        gen.append({"text": r["text"], "label": int(r["label"] == "attack"),
                    "kind": "indirect (train carriers)" if r["label"] == "attack" else "indirect twins"})
    if slot_twins_v10:
        docs = [r["text"] for r in _rows(data_dir, "bipia_train", "benign")] + sg_train_texts
        for r in slot_twins(declaratives(docs), sg_train_texts, slot_twins_v10, seed + 18):
            gen.append({"text": r["text"], "label": 0, "kind": "indirect slot twins (v10)"})
    for r in framed("train", 700, seed + 12):
        gen.append({"text": r["text"], "label": 1, "kind": f"{r['family']} (train templates)"})
    for r in encoded("train", 80, seed + 13, kinds=("rot13", "leetspeak")):
        gen.append({"text": r["text"], "label": 1, "kind": "encoded (train templates)"})
    for r in _translated("train", seed + 14):
        gen.append({"text": r["text"], "label": 1, "kind": "translated (train templates)"})
    # v4: the two families v3 regressed on, composed (pi_extraction) or built on training chat (pi_actas)
    for t in extraction_requests(500, seed + 15):
        gen.append({"text": t, "label": 1, "kind": V4_EXTRACTION})
    for t in role_prompts([t for t, _ in sg_train], 700, seed + 16):
        gen.append({"text": t, "label": 0, "kind": V4_ROLE_PROMPTS})
    return PiHeldout(test, sg_train, sg_calib, gen, excluded)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    h = build(a.data)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "heldout.jsonl"), "w", encoding="utf-8") as f:
        for r in h.test:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for r in h.test:
        counts[f"{r['label']} / {r['source']}"] = counts.get(f"{r['label']} / {r['source']}", 0) + 1
    summary = {"test": counts, "sharegpt_excluded_ambiguous": h.excluded, "sharegpt_calib": len(h.sharegpt_calib),
               "sharegpt_train": len(h.sharegpt_train),
               "generated_train": {k: sum(1 for r in h.generated_train if r["kind"] == k)
                                   for k in sorted({r["kind"] for r in h.generated_train})}}
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
