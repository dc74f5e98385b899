#!/usr/bin/env python3
"""Stage 1 of the prompt-injection cascade: a microsecond hashed n-gram MLP distilled from the
transformer, and the calibration of its skip threshold.

    .venv-train/bin/python models/train/pi_stage1.py --data ../shared/datasets

(needs torch: models/train/requirements-finetune.txt, which `scripts/train DATA prompt-injection`
installs; rerun it whenever models/prompt-injection/model.onnx changes: the stage-1 manifest
records the transformer's sha256 and Rampart turns the cascade off when the two disagree.)

What it does:
1. Texts: the transformer's training sources (pi_data.pi_split: attack sources, generated attacks,
   benign sources, over-defence templates) plus ShareGPT user messages of the TRAIN part. Every text
   is cut into the engine's 2 KiB prompt pieces (PROMPT_WINDOW in scoring/src/engine.rs), the unit
   the models score.
   ShareGPT split: the transformer's (models/train/pi_heldout.py): x = first 32 bits of
   sha1("sharegpt:" + text) / 2^32; x < 0.4 is the test part (the eval and the chat benchmark use
   it), [0.4, 0.5) the transformer's calibration part; stage 1 uses only x >= 0.5.
2. Labels: the transformer in models/prompt-injection scores every piece exactly as Rust does
   (tokenised without truncation, 126-token windows every 96, batch 1 per window, max over windows).
   Scores are cached in target/pi-stage1-labels-<model sha>.npz (scores only, no text).
3. Fit/calibration split by sha1 of the piece: last byte < 52 (~20%) is the calibration part.
   The MLP (DIM -> 64 -> 1) learns the transformer's SCORE on the fit part (pi_stage1_fit: soft
   BCE + logit regression; v3's stage 1 learned only `score > 0.5` and could not tell "sure benign"
   from "hesitant", so 40-word chat skipped 17% of the time). The fit part also gets 40-word
   windows (every 20 words) of fit-part ShareGPT messages the transformer scores < 0.02, with
   their message's score: the chat the proxy sees comes in such pieces.
4. Calibration: `skip_below` is the highest stage-1 score such that >= `--calib-recall` (99.8%) of
   calibration pieces the transformer flags score at least that much (the 0.2% quantile of their
   stage-1 scores), divided by `--margin` (default 1). The issue's target is 99.5%; the stricter
   quantile is the allowance for attack families neither part holds (history: v3's sklearn stage 1
   needed margin 8 on the 0.5% quantile, 0.00147, to lose only 0.22% of JailbreakBench's flagged
   texts). Pieces below it never reach the transformer; their final score is stage 1's
   (always < skip_below < 0.5).
5. Writes models/prompt-injection/stage1/{model.onnx, featurizer.json, cascade.json, CARD.md} and
   prints the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import load  # noqa: E402
from featurize import Featurizer  # noqa: E402
from onnx_export import export_onnx, ort_scores  # noqa: E402
from pi_model import Windowing, ort_session  # noqa: E402
from pi_stage1_fit import fit_distilled  # noqa: E402

STAGE1_SPEC = {
    "name": "prompt-injection-stage1",
    "version": 1,
    "dim": 32768,
    # Twice the engine's 2 KiB prompt piece: stage 1 reads every byte it decides on. A longer text
    # always goes to the transformer (the Rust cascade checks max_bytes).
    "max_bytes": 4096,
    "hash": "fnv1a32",
    "value": "log1p_count_l2",
    "lowercase": "ascii",
    "families": [
        {"kind": "char", "n": 3, "seed": 3},
        {"kind": "char", "n": 4, "seed": 4},
        {"kind": "char", "n": 5, "seed": 5},
        {"kind": "word", "n": 1, "seed": 11},
        {"kind": "word", "n": 2, "seed": 12},
        {"kind": "word", "n": 3, "seed": 13},
    ],
}

PIECE_BYTES = 2048  # scoring/src/engine.rs PROMPT_WINDOW
PIECE_OVERLAP = 512
TARGET_RECALL = 0.995
CALIB_RECALL = 0.998
# Chat windows added to the fit part (models/train/pi_stage1_fit.py explains the soft targets).
CHAT_WINDOW_WORDS, CHAT_WINDOW_STEP, CHAT_WINDOW_MAX_TEACHER = 40, 20, 0.02


def sha1_last_byte(text: str) -> int:
    return hashlib.sha1(text.encode("utf-8")).digest()[-1]


def sharegpt_frac(text: str) -> float:
    """The prompt-injection split of ShareGPT (models/train/pi_heldout.py, `stable(text, "sharegpt:")`):
    [0, 0.4) test, [0.4, 0.5) the transformer's calibration, [0.5, 1) training."""
    return int(hashlib.sha1(("sharegpt:" + text).encode("utf-8")).hexdigest()[:8], 16) / 2**32


def sharegpt_held_out(text: str) -> bool:
    """Test and transformer-calibration parts: stage 1 never trains or calibrates on them."""
    return sharegpt_frac(text) < 0.5


def is_calibration(piece: str) -> bool:
    return sha1_last_byte(piece) < 52


def pieces(text: str) -> list[str]:
    """The engine's `windows(text, PROMPT_WINDOW)`: 2 KiB byte windows overlapping 512, cut back
    to char boundaries (ends move left, starts move right)."""
    b = text.encode("utf-8")
    if len(b) <= PIECE_BYTES:
        return [text]

    def boundary(i: int) -> bool:
        return i >= len(b) or (b[i] & 0xC0) != 0x80

    out, start, step = [], 0, PIECE_BYTES - PIECE_OVERLAP
    while True:
        end = min(start + PIECE_BYTES, len(b))
        while not boundary(end):
            end -= 1
        out.append(b[start:end].decode("utf-8"))
        if end == len(b):
            return out
        nxt = start + step
        while not boundary(nxt):
            nxt += 1
        start = nxt


def training_texts(data_dir: str) -> dict[str, list[str]]:
    from pi_data import pi_split

    split = pi_split(data_dir)
    share = [r["text"] for r in load(data_dir, "sharegpt_user_messages")]
    return {
        "pi_train": [row[0] for row in split.train],  # (text, label[, weight])
        "pi_calib": [t for v in split.calib.values() for t in v],
        "sharegpt_train": [t for t in share if not sharegpt_held_out(t)],
    }


def unique_pieces(sets: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """Every text's prompt pieces, each piece once (first set that holds it), and that set's name."""
    all_pieces: list[str] = []
    origin: list[str] = []
    seen = set()
    for name, texts in sets.items():
        for t in texts:
            for p in pieces(t):
                if p and p not in seen:
                    seen.add(p)
                    all_pieces.append(p)
                    origin.append(name)
    return all_pieces, origin


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def transformer_scores(model_dir: str, texts: list[str], cache_path: str, threads: int) -> np.ndarray:
    """Max-over-windows transformer score per text, batch 1 per window (as Rust), cached by text sha1."""
    cache = {}
    if os.path.exists(cache_path):
        z = np.load(cache_path)
        cache = dict(zip(z["keys"].tolist(), z["scores"].tolist()))
    keys = [hashlib.sha1(t.encode("utf-8")).hexdigest()[:16] for t in texts]
    todo = sorted({k: t for k, t in zip(keys, texts) if k not in cache}.items())
    if todo:
        win = Windowing(os.path.join(model_dir, "tokenizer.json"))
        sessions = [ort_session(os.path.join(model_dir, "model.onnx"), threads=1) for _ in range(threads)]
        started = time.time()

        def work(part: int) -> list[tuple[str, float]]:
            sess, out = sessions[part], []
            for k, t in todo[part::threads]:
                best = 0.0
                for w in win.text_windows([t])[0]:
                    ids = np.asarray([w], dtype=np.int64)
                    s = sess.run(["score"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0, 0]
                    best = max(best, float(s))
                out.append((k, best))
            return out

        with ThreadPoolExecutor(threads) as pool:
            for part in pool.map(work, range(threads)):
                cache.update(part)
        print(f"[stage1] transformer labelled {len(todo)} pieces in {time.time() - started:.0f}s", flush=True)
        os.makedirs(os.path.dirname(cache_path), exist_ok=True)
        np.savez(cache_path, keys=np.asarray(list(cache.keys())), scores=np.asarray(list(cache.values()), dtype=np.float32))
    return np.asarray([cache[k] for k in keys], dtype=np.float32)


def chat_windows(pieces_: list[str], origin: list[str], teacher: np.ndarray, fit: np.ndarray) -> tuple[list[str], np.ndarray]:
    """40-word windows of fit-part ShareGPT pieces the transformer is sure about, with their score."""
    texts, scores = [], []
    for i in fit:
        if origin[i] != "sharegpt_train" or teacher[i] >= CHAT_WINDOW_MAX_TEACHER:
            continue
        words = pieces_[i].split()
        for start in range(0, len(words) - CHAT_WINDOW_WORDS + 1, CHAT_WINDOW_STEP):
            if len(words) > CHAT_WINDOW_WORDS:
                texts.append(" ".join(words[start:start + CHAT_WINDOW_WORDS]))
                scores.append(teacher[i])
    return texts, np.asarray(scores, dtype=np.float32)


def calibrate(stage1: np.ndarray, teacher: np.ndarray, margin: float, recall: float) -> dict:
    flagged = stage1[teacher > 0.5]
    if len(flagged) < 200:
        raise SystemExit(f"only {len(flagged)} flagged calibration pieces: too few to calibrate {recall:.1%} recall")
    q = float(np.quantile(flagged, 1.0 - recall, method="lower"))
    skip_below = min(q / margin, 0.49)
    return {"skip_below": skip_below, "quantile": q, "quantile_recall": recall, "flagged_pieces": int(len(flagged))}


def figures(name: str, stage1: np.ndarray, teacher: np.ndarray, skip_below: float) -> dict:
    flagged = teacher > 0.5
    skipped = stage1 < skip_below
    return {
        "set": name,
        "pieces": int(len(stage1)),
        "transformer_flagged": int(flagged.sum()),
        "skip_rate": float(skipped.mean()) if len(stage1) else 0.0,
        "recall_of_flagged": float(1.0 - (flagged & skipped).sum() / max(flagged.sum(), 1)),
        "flagged_missed": int((flagged & skipped).sum()),
    }


def write_card(out_dir: str, manifest: dict) -> None:
    c = manifest["calibration"]
    lines = [
        "# Prompt-injection cascade, stage 1",
        "",
        "Hashed n-gram MLP (" + manifest["arch"] + ") distilled from the transformer in `..`: it predicts",
        "whether the transformer flags a 2 KiB prompt piece (score > 0.5). Pieces scoring below",
        f"`skip_below` = {manifest['skip_below']:.5f} are not sent to the transformer; their score is stage 1's.",
        "",
        f"Transformer: sha256 `{manifest['transformer_sha256']}` (Rampart disables the cascade when",
        "`model.onnx` differs; rerun `models/train/pi_stage1.py`).",
        "",
        "Data: the transformer's training sources (pi_data.pi_split) and ShareGPT user messages of the",
        "train part (sha1(\"sharegpt:\" + text) first 32 bits / 2^32 >= 0.5; the test part < 0.4 is never used here). Pieces split by",
        "sha1(piece) last byte < 52 (~20%) into the calibration part; the MLP never sees it.",
        "",
        "Fit: pi_stage1_fit.py distils the transformer's score (soft BCE + logit regression, flagged pieces x3",
        "weight); the fit part also holds 40-word windows of fit-part ShareGPT messages the transformer scores < 0.02.",
        "",
        f"Calibration: {c['flagged_pieces']} flagged calibration pieces; {100 * (1 - c['quantile_recall']):.1f}% quantile of their",
        f"stage-1 score {c['quantile']:.5f} (>= {100 * c['quantile_recall']:.1f}% of them reach the transformer; the issue's",
        f"target is {100 * TARGET_RECALL:.1f}%), divided by the margin {manifest['margin']} -> skip_below.",
        "",
        "| set | pieces | transformer flagged | skip rate | recall of flagged | missed |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for f in manifest["figures"]:
        lines.append(f"| {f['set']} | {f['pieces']} | {f['transformer_flagged']} | {100 * f['skip_rate']:.1f}% "
                     f"| {100 * f['recall_of_flagged']:.2f}% | {f['flagged_missed']} |")
    lines += ["", "`rampart eval` prints the same skip rate and recall loss on the held-out sets through the Rust cascade.", ""]
    with open(os.path.join(out_dir, "CARD.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="dataset folder (e.g. ../shared/datasets)")
    ap.add_argument("--transformer", default="models/prompt-injection", help="transformer model folder")
    ap.add_argument("--out", default="models/prompt-injection/stage1")
    ap.add_argument("--threads", type=int, default=2, help="parallel labelling sessions")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--margin", type=float, default=1.0, help="skip_below = quantile / margin (>= 1)")
    ap.add_argument("--calib-recall", type=float, default=CALIB_RECALL,
                    help="share of flagged calibration pieces that must reach the transformer (>= 0.995)")
    ap.add_argument("--sharegpt-limit", type=int, default=0, help="use at most N ShareGPT train messages (0: all)")
    a = ap.parse_args()
    if a.margin < 1.0:
        raise SystemExit("--margin must be >= 1 (a smaller one would raise the threshold above the quantile)")
    if not TARGET_RECALL <= a.calib_recall < 1.0:
        raise SystemExit(f"--calib-recall must be in [{TARGET_RECALL}, 1)")
    started = time.time()
    model_path = os.path.join(a.transformer, "model.onnx")
    model_sha = sha256_file(model_path)
    with open(model_path, "rb") as f:
        model_bytes = f.read()
    model_crc, model_size = zlib.crc32(model_bytes), len(model_bytes)
    sets = training_texts(a.data)
    if a.sharegpt_limit:
        sets["sharegpt_train"] = sets["sharegpt_train"][: a.sharegpt_limit]
    all_pieces, origin = unique_pieces(sets)
    origin_arr = np.asarray(origin)
    print(f"[stage1] {len(all_pieces)} pieces: " + ", ".join(f"{k} {int((origin_arr == k).sum())}" for k in sets), flush=True)
    cache = os.path.join("target", f"pi-stage1-labels-{model_sha[:16]}.npz")
    teacher = transformer_scores(a.transformer, all_pieces, cache, a.threads)
    calib = np.asarray([is_calibration(p) for p in all_pieces])
    print(f"[stage1] transformer flags {int((teacher > 0.5).sum())} of {len(teacher)} pieces", flush=True)

    fz = Featurizer(STAGE1_SPEC)
    X = fz.featurize_sparse(all_pieces)
    fit_idx, cal_idx = np.where(~calib)[0], np.where(calib)[0]
    win_texts, win_teacher = chat_windows(all_pieces, origin, teacher, fit_idx)
    print(f"[stage1] + {len(win_texts)} chat windows in the fit part", flush=True)
    t0 = time.time()
    X_fit = sp.vstack([X[fit_idx], fz.featurize_sparse(win_texts)]).tocsr()
    params = fit_distilled(X_fit, np.concatenate([teacher[fit_idx], win_teacher]), a.hidden, a.epochs, a.seed)
    print(f"[stage1] trained in {time.time() - t0:.0f}s", flush=True)

    os.makedirs(a.out, exist_ok=True)
    onnx_path = os.path.join(a.out, "model.onnx")
    export_onnx(params, onnx_path, "rampart_prompt_injection_stage1",
                "Rampart prompt-injection cascade stage 1: hashed n-grams -> MLP, distilled from the transformer")
    s1 = ort_scores(onnx_path, X)
    cal = calibrate(s1[cal_idx], teacher[cal_idx], a.margin, a.calib_recall)
    figs = [figures("calibration part (all sources)", s1[cal_idx], teacher[cal_idx], cal["skip_below"])]
    for name in sets:
        m = cal_idx[origin_arr[cal_idx] == name]
        figs.append(figures(f"calibration part: {name}", s1[m], teacher[m], cal["skip_below"]))
    figs.append(figures("fit part (trained on)", s1[fit_idx], teacher[fit_idx], cal["skip_below"]))

    spec = dict(STAGE1_SPEC)
    spec["input"] = "sparse"
    spec["model"] = {"arch": f"mlp {spec['dim']}-{a.hidden}-1 relu sigmoid", "hidden": a.hidden,
                     "inputs": ["indices", "values"], "output": "score"}
    with open(os.path.join(a.out, "featurizer.json"), "w", encoding="utf-8") as f:
        json.dump(spec, f, indent=2)
        f.write("\n")
    manifest = {
        "kind": "cascade-stage1",
        "arch": spec["model"]["arch"],
        "skip_below": cal["skip_below"],
        "max_bytes": spec["max_bytes"],
        "transformer_sha256": model_sha,
        # What Rampart checks at load (the Rust side has CRC-32 at hand, not SHA-256).
        "transformer_bytes": model_size,
        "transformer_crc32": model_crc,
        "target_recall": TARGET_RECALL,
        "margin": a.margin,
        "calibration": cal,
        "figures": figs,
        "calib_recall": a.calib_recall,
        "split": {"sharegpt_used": "int(sha1('sharegpt:' + text)[:8], 16) / 2**32 >= 0.5 (test part: < 0.4)",
                  "calibration_pieces": "sha1(piece).digest()[-1] < 52"},
        "train_args": {"hidden": a.hidden, "epochs": a.epochs, "seed": a.seed, "sharegpt_limit": a.sharegpt_limit,
                       "fit": "pi_stage1_fit.fit_distilled", "chat_windows": len(win_texts)},
    }
    with open(os.path.join(a.out, "cascade.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    write_card(a.out, manifest)
    print(f"[stage1] skip_below = {cal['skip_below']:.5f} (quantile {cal['quantile']:.5f}, "
          f"{cal['flagged_pieces']} flagged calibration pieces)")
    for f_ in figs:
        print(f"[stage1] {f_['set']:40s} pieces {f_['pieces']:6d} flagged {f_['transformer_flagged']:5d} "
              f"skip {100 * f_['skip_rate']:5.1f}% recall-of-flagged {100 * f_['recall_of_flagged']:6.2f}% "
              f"missed {f_['flagged_missed']}")
    print(f"[stage1] done in {time.time() - started:.0f}s; wrote {a.out}")


if __name__ == "__main__":
    main()
