"""Stage 1 of the prompt-injection cascade, the fit: a hashed n-gram MLP distilled from the
transformer's SCORES (not its 0/1 decisions), in torch on CPU.

Why soft targets: v3's stage 1 learned `transformer score > 0.5` with sklearn's MLPClassifier.
Its benign chat then sat at ~0.005-0.01 (median), the same height as the flagged attacks it
ranked worst, so the skip threshold that keeps 99.5% of flagged texts let only ~17% of 40-word
chat texts skip the transformer. Learning the teacher's logit as well separates "the teacher is
sure this is benign" (logit -8) from "the teacher hesitates" (logit -2), which is exactly the
ranking the skip threshold needs.

Loss per piece: BCE against the teacher's probability + `LOGIT_WEIGHT` x squared error of the
logits (teacher logit clipped to +-LOGIT_CLIP), weighted per piece (flagged pieces x
`FLAGGED_WEIGHT`: missing one costs recall, skipping a benign one only costs time).

The result has the shape models/train/onnx_export.export_onnx writes: (W1, b1, W2, b2).
"""

from __future__ import annotations

import numpy as np

LOGIT_CLIP = 8.0
LOGIT_WEIGHT = 0.05
FLAGGED_WEIGHT = 3.0


def _batch(X, rows, torch):
    """CSR rows -> (indices, per-sample weights, offsets) for nn.EmbeddingBag(mode="sum")."""
    sub = X[rows]
    return (torch.from_numpy(sub.indices.astype(np.int64)), torch.from_numpy(sub.data.astype(np.float32)),
            torch.from_numpy(sub.indptr[:-1].astype(np.int64)))


def fit_distilled(X, teacher: np.ndarray, hidden: int, epochs: int, seed: int, batch_size: int = 256, lr: float = 2e-3):
    """X: CSR [n, dim] float32; teacher: transformer probabilities [n]. Returns (W1, b1, W2, b2)."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    dim = X.shape[1]
    emb = torch.nn.EmbeddingBag(dim, hidden, mode="sum")
    torch.nn.init.normal_(emb.weight, std=0.05)
    b1 = torch.nn.Parameter(torch.zeros(hidden))
    out = torch.nn.Linear(hidden, 1)
    params = list(emb.parameters()) + [b1] + list(out.parameters())
    opt = torch.optim.Adam(params, lr=lr)
    p = np.clip(teacher.astype(np.float64), 1e-6, 1 - 1e-6)
    target_p = torch.from_numpy(p.astype(np.float32))
    target_logit = torch.from_numpy(np.clip(np.log(p / (1 - p)), -LOGIT_CLIP, LOGIT_CLIP).astype(np.float32))
    weight = torch.from_numpy(np.where(teacher > 0.5, FLAGGED_WEIGHT, 1.0).astype(np.float32))
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    for _ in range(epochs):
        order = rng.permutation(n)
        for start in range(0, n, batch_size):
            rows = order[start:start + batch_size]
            idx, val, off = _batch(X, rows, torch)
            logit = out(torch.relu(emb(idx, off, per_sample_weights=val) + b1)).squeeze(1)
            r = torch.from_numpy(rows)
            bce = torch.nn.functional.binary_cross_entropy_with_logits(logit, target_p[r], reduction="none")
            mse = (logit.clamp(-LOGIT_CLIP - 4, LOGIT_CLIP + 4) - target_logit[r]) ** 2
            loss = ((bce + LOGIT_WEIGHT * mse) * weight[r]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        return (emb.weight.numpy().astype(np.float32).copy(), b1.numpy().astype(np.float32).copy(),
                out.weight.numpy().T.astype(np.float32).copy(), out.bias.numpy().astype(np.float32).copy())
