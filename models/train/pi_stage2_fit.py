"""Stage 2 of the prompt-injection cascade, the fit: a 2-layer student transformer distilled from
the v3 teacher's scores, in torch on CPU.

Initialisation: the teacher's own fine-tuned embeddings, pooling head and encoder layers 0 and 5
(`STUDENT_LAYERS`). Layer 0 turns the (shared) embeddings into contextual features and layer 5
is the one whose output the teacher's head was trained to read, so the student starts with a
head that already means "prompt injection" rather than learning one from scratch; the layers in
between are what is dropped (DistilBERT's "take every other layer" does not fit 2 of 6).

Loss per window, as stage 1 (pi_stage1_fit.py): BCE against the teacher's probability +
`LOGIT_WEIGHT` x squared error of the logits (teacher logit clipped to +-LOGIT_CLIP), flagged
windows weighted `FLAGGED_WEIGHT` (a missed flag costs recall, a benign text kept costs time).
The logit term is what separates "the teacher is sure this is benign" from "it hesitates",
which is the ranking the skip threshold needs.

Training runs for a wall-clock budget (the machine is shared): learning rate warms up over
`WARMUP_STEPS` and then falls linearly with elapsed time to 5% at the budget's end.
"""

from __future__ import annotations

import random
import time

import numpy as np

from pi_model import build_module, pad

STUDENT_LAYERS = (0, 5)
LOGIT_CLIP = 10.0
LOGIT_WEIGHT = 0.1
FLAGGED_WEIGHT = 3.0
WARMUP_STEPS = 30


def build_student(base_dir: str, teacher_state: dict, teacher_shift: float):
    """The teacher module (base config, teacher weights) cut down to `STUDENT_LAYERS`.

    The teacher's state was saved before its calibration shift was set; the student learns the
    shipped (shifted) score directly, so its own shift starts at the teacher's and stays fixed."""
    import torch

    module = build_module(base_dir)
    module.load_state_dict(teacher_state)
    layers = module.encoder.encoder.layer
    module.encoder.encoder.layer = torch.nn.ModuleList([layers[i] for i in STUDENT_LAYERS])
    module.encoder.config.num_hidden_layers = len(STUDENT_LAYERS)
    module.shift.fill_(teacher_shift)
    return module


def length_batches(examples: list, batch_size: int, rng: random.Random) -> list[list[int]]:
    """Batches of similar length (little padding), in random order."""
    order = sorted(range(len(examples)), key=lambda i: (len(examples[i][0]), rng.random()))
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    rng.shuffle(batches)
    return batches


def fit_student(module, examples: list[tuple[list[int], float]], minutes: float, epochs: int, lr: float,
                batch_size: int, seed: int, log_every: int = 10):
    """examples: (window ids with [CLS]/[SEP], teacher probability). Returns the trained module
    and a summary of the run."""
    import torch

    torch.manual_seed(seed)
    rng = random.Random(seed)
    params = [p for p in module.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    budget = minutes * 60.0
    started = time.time()
    step, seen, done = 0, 0, False
    running = []
    module.train()
    for epoch in range(epochs):
        for rows in length_batches(examples, batch_size, rng):
            elapsed = time.time() - started
            if elapsed > budget:
                done = True
                break
            scale = min(1.0, (step + 1) / WARMUP_STEPS) * max(0.05, 1.0 - elapsed / budget)
            for g in opt.param_groups:
                g["lr"] = lr * scale
            ids, mask = pad([examples[i][0] for i in rows])
            p = np.clip(np.asarray([examples[i][1] for i in rows], dtype=np.float64), 1e-6, 1 - 1e-6)
            target_p = torch.from_numpy(p.astype(np.float32))
            target_logit = torch.from_numpy(np.clip(np.log(p / (1 - p)), -LOGIT_CLIP, LOGIT_CLIP).astype(np.float32))
            weight = torch.from_numpy(np.where(p > 0.5, FLAGGED_WEIGHT, 1.0).astype(np.float32))
            logit = module.logits(torch.from_numpy(ids), torch.from_numpy(mask))
            bce = torch.nn.functional.binary_cross_entropy_with_logits(logit, target_p, reduction="none")
            mse = (logit.clamp(-LOGIT_CLIP - 4, LOGIT_CLIP + 4) - target_logit) ** 2
            loss = ((bce + LOGIT_WEIGHT * mse) * weight).mean()
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            step += 1
            seen += len(rows)
            running.append(float(loss))
            if step % log_every == 0:
                print(f"[stage2] epoch {epoch} step {step} windows {seen} loss {np.mean(running[-log_every:]):.4f} "
                      f"lr {lr * scale:.2e} {time.time() - started:.0f}s", flush=True)
        if done:
            break
    module.eval()
    return module, {"steps": step, "windows_seen": seen, "epochs_planned": epochs,
                    "epochs_done": round(seen / max(len(examples), 1), 2), "seconds": round(time.time() - started),
                    "final_loss": float(np.mean(running[-log_every:])) if running else None,
                    "lr": lr, "batch": batch_size, "seed": seed, "budget_minutes": minutes}
