"""Loads the dataset pool and splits it by source family into training, calibration and test
sets. Splitting by family (not by random rows) keeps near-duplicate texts from one source out of
both sides, so the held-out numbers measure generalisation to unseen sources."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field

from augment import attack_variants, benign_values, hard_benign, hard_negatives
from normalize import query_values, runtime_view


@dataclass
class Split:
    train_pos: list[str]
    train_neg: list[str]
    calib: dict[str, list[str]]
    test: dict[str, list[str]]
    overlap: dict[str, int]  # per test set: exact duplicates of training (or calibration) texts removed
    attack_keys: list[str]
    benign_keys: list[str]
    hn_train: list[str] = field(default_factory=list)
    # Calibration sets with their own FPR target; the other calibration sets are pooled under the
    # model's target (train.py).
    calib_targets: dict[str, float] = field(default_factory=dict)


def load(data_dir: str, name: str) -> list[dict]:
    path = os.path.join(data_dir, name + ".jsonl")
    with open(path, "r", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _rows(data_dir: str, name: str, label=None) -> list[dict]:
    return [r for r in load(data_dir, name) if label is None or r["label"] == label]


def stable_frac(text: str) -> float:
    """Position of a text in [0, 1) by hash, for row splits that do not change between runs."""
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest()[:8], 16) / 2**32


def dedupe(texts):
    seen = set()
    out = []
    for t in texts:
        if t and t not in seen:
            seen.add(t)
            out.append(t)
    return out


def _drop_seen(test_sets: dict, seen) -> dict:
    """De-duplicates each test set in place and drops texts in `seen`; returns the counts dropped."""
    overlap = {}
    for k, v in list(test_sets.items()):
        v = dedupe(v)
        kept = [t for t in v if t not in seen]
        overlap[k] = len(v) - len(kept)
        test_sets[k] = kept
    return overlap


_WEAK_POS = re.compile(r"[a-z0-9_.%+-]*")

# SQLi generated-data sizes (distinct texts; copies of each in training) and the FPR target (percent)
# of the calibration hard negatives.
SQLI_SETTINGS = {"hard_benign": 8000, "hard_benign_copies": 2, "attack_variants": 1500, "calib_hn_fpr_pct": 1}
HN_CALIB = "hard negatives (calibration templates)"


def _sentences(text: str, limit: int = 300) -> list[str]:
    """Splits a long document into field-sized pieces (lines, then sentences) of at most `limit` chars."""
    out = []
    for line in text.splitlines():
        for piece in re.split(r"(?<=[.!?])\s+", line):
            piece = piece.strip()
            if piece:
                out.append(piece[:limit])
    return out


def sqli_data(data_dir: str) -> Split:
    def rows(name, label=None):
        return _rows(data_dir, name, label)

    # --- training: kaggle family + curated payload lists + generated hard negatives + English
    train_pos, train_neg = [], []
    for name in ["kaggle_sqli_modified", "kaggle_sqli_sajid576"]:
        for r in rows(name):
            (train_pos if r["label"] == "sqli" else train_neg).append(runtime_view(r["text"]))
    for name in ["payloadbox", "payloadsallthethings", "fuzzdb"]:
        for r in rows(name, "sqli"):
            train_pos.append(runtime_view(r["text"]))
    # kaggle "sqli" rows include lone tokens ("desc", "0", "s", "3.10e+17"): no injection signal
    # in a single field, so they are dropped from the attack side.
    n_before = len(train_pos)
    train_pos = [t for t in train_pos if len(t) >= 3 and not _WEAK_POS.fullmatch(t)]
    print(f"[sqli] dropped {n_before - len(train_pos)} token-only attack rows", flush=True)
    train_pos += attack_variants(SQLI_SETTINGS["attack_variants"], seed=13)
    for r in rows("websec_ext_cmdi", "benign"):
        train_neg.append(runtime_view(r["text"]))
    # bipia benign (e-mails, markdown tables, code answers): ordinary text of kinds no test set has,
    # split into field-sized pieces.
    for r in rows("bipia_train", "benign"):
        train_neg += [runtime_view(p) for p in _sentences(r["text"])]
    train_neg += benign_values(6000, seed=3)
    hn_train = hard_negatives("train", 1500, seed=7)
    hb_train = hard_benign(SQLI_SETTINGS["hard_benign"], seed=11)
    # texts labelled both ways inside training: drop them from the benign side
    pos_set = set(train_pos)
    train_neg = [t for t in train_neg if t not in pos_set]
    train_pos = dedupe(train_pos)
    hn_train = [t for t in hn_train if t not in pos_set]
    hb_train = [t for t in hb_train if t not in pos_set]
    hn_set = set(hn_train) | set(hb_train)
    train_neg_d = (dedupe([t for t in train_neg if t not in hn_set]) + hn_train * 3
                   + hb_train * SQLI_SETTINGS["hard_benign_copies"])
    # Very short values carry few features each; give the enumerated ones (0..1000, letters, ...) 5x weight.
    train_neg_d += [t for t in benign_values(0, seed=3) if t not in pos_set] * 4
    train_texts = set(train_pos) | set(train_neg_d)

    # --- calibration (held out, benign only): CSIC 2010 field values + gsm8k
    calib = []
    for r in rows("csic2010_lines"):
        t = r["text"]
        _, _, rest = t.partition(" ")
        _, _, qs = rest.partition("?")
        for v in query_values(qs):
            calib.append(runtime_view(v.replace("+", " ")))
    # calibration stays frequency-weighted (one entry per occurrence, as a WAF sees traffic)
    calib_prompts = [runtime_view(r["text"]) for r in rows("benign_prompts_gsm8k")]
    hn_test = hard_negatives("test", 400, seed=99)
    hn_fresh = hard_negatives("fresh", 400, seed=123)
    hn_calib = hard_negatives("calib", 1000, seed=77)

    # --- test: sqlmap family (httpparams, modsec_learn) + other benign families
    test_sets = {}
    hp = rows("httpparams")
    test_sets["httpparams sqli"] = [runtime_view(r["text"]) for r in hp if r["label"] == "sqli"]
    test_sets["httpparams benign"] = [runtime_view(r["text"]) for r in hp if r["label"] == "benign"]
    ms = rows("modsec_learn_dataset")
    ms_pos, ms_neg = [], []
    for r in ms:
        vals = query_values(r["text"])
        (ms_pos if r["label"] == "sqli" else ms_neg).extend(runtime_view(v.replace("+", " ")) for v in vals)
    test_sets["modsec_learn sqli"] = ms_pos
    test_sets["modsec_learn benign (field values)"] = ms_neg
    test_sets["kaggle_xss benign (wikipedia html)"] = [runtime_view(r["text"]) for r in rows("kaggle_xss_syedsaqlain", "benign")]
    test_sets["benign prompts (alpaca_eval, self_instruct, awesome_chatgpt)"] = [
        runtime_view(r["text"]) for n in ["benign_prompts_alpaca_eval", "benign_prompts_self_instruct",
                                          "benign_prompts_awesome_chatgpt_prompts"] for r in rows(n)]
    test_sets["hard negatives (held-out templates)"] = hn_test
    test_sets["hard negatives (fresh templates)"] = hn_fresh
    # httpparams shares ~7.5k SQLi texts with kaggle
    overlap = _drop_seen(test_sets, train_texts)
    calib_all = {"csic2010 field values (every occurrence)": calib,
                 "gsm8k prompts": [t for t in dedupe(calib_prompts) if t not in train_texts],
                 HN_CALIB: [t for t in hn_calib if t not in train_texts]}
    attack_keys = [k for k in test_sets if k.endswith(" sqli")]
    # The generated hard negatives count as benign test data too: the FPR target is met on traffic
    # and on the texts a WAF most often gets wrong (names with apostrophes, prose with SQL words).
    benign_keys = [k for k in test_sets if k not in attack_keys]
    return Split(train_pos, train_neg_d, calib_all, test_sets, overlap, attack_keys, benign_keys,
                 hn_train + hb_train, {HN_CALIB: SQLI_SETTINGS["calib_hn_fpr_pct"] / 100})
