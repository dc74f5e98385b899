#!/usr/bin/env python3
"""Trains Rampart's hashed n-gram SQLi model and exports it as ONNX.

    python3 models/train/train.py sqli --data ../shared/datasets --out models/sqli

The model: hashed n-gram features (see featurize.py, spec written to featurizer.json)
-> 1-hidden-layer MLP (DIM -> H -> 1, ReLU, sigmoid), trained with scikit-learn, exported as a
hand-built ONNX graph (sparse input: `indices` int64 [N, K] + `values` float32 [N, K], the
non-zero features of each text; output `score` float32 [N, 1]).
The output bias is shifted so that the operating point chosen on held-out calibration data
maps to exactly 0.5. Data is split by source family, never by random rows.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

# The sibling modules are imported by name when this file is run as a script.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from card import parity_texts, write_card, write_json, write_parity  # noqa: E402
from data import sqli_data  # noqa: E402
from evaluate import diagnostics, held_out_metrics, score_sets  # noqa: E402
from featurize import Featurizer  # noqa: E402
from normalize import runtime_view  # noqa: E402
from onnx_export import calibrate, export_onnx  # noqa: E402


SQLI_SPEC = {
    "name": "sqli",
    "version": 1,
    "dim": 32768,
    "max_bytes": 4096,
    "hash": "fnv1a32",
    "value": "log1p_count_l2",
    "lowercase": "ascii",
    "families": [
        {"kind": "char", "n": 1, "seed": 1},
        {"kind": "char", "n": 2, "seed": 2},
        {"kind": "char", "n": 3, "seed": 3},
        {"kind": "char", "n": 4, "seed": 4},
        {"kind": "word", "n": 1, "seed": 11},
        {"kind": "word", "n": 2, "seed": 12},
    ],
}


# Per model: featurizer spec, data split, the text view used at runtime, and the target FPR of the
# operating point. The prompt-injection model is a transformer with its own pipeline (pi_finetune.py).
MODELS = {
    "sqli": {"spec": SQLI_SPEC, "data": sqli_data, "prep": runtime_view, "target_fpr": 0.001},
}


def train_mlp(X, y, hidden: int, alpha: float, epochs: int, seed: int):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    # tol=0 and n_iter_no_change > epochs: exactly `epochs` passes, never an early stop.
    clf = MLPClassifier(hidden_layer_sizes=(hidden,), activation="relu", solver="adam", alpha=alpha,
                        batch_size=256, learning_rate_init=1e-3, max_iter=epochs, shuffle=True,
                        random_state=seed, early_stopping=False, n_iter_no_change=epochs + 1, tol=0.0,
                        verbose=False)
    with warnings.catch_warnings():
        # Stopping at max_iter is the plan, not a failure.
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(X, y)
    W1, W2 = clf.coefs_
    b1, b2 = clf.intercepts_
    return (W1.astype(np.float32), b1.astype(np.float32), W2.astype(np.float32), b2.astype(np.float32))


def run(kind: str, data_dir: str, out_dir: str, hidden: int, epochs: int, alpha: float, seed: int):
    t_start = time.time()
    cfg = MODELS[kind]
    os.makedirs(out_dir, exist_ok=True)
    spec = dict(cfg["spec"])
    split = cfg["data"](data_dir)
    train_pos, train_neg = split.train_pos, split.train_neg
    fz = Featurizer(spec)
    print(f"[{kind}] train: {len(train_pos)} attack, {len(train_neg)} benign", flush=True)

    X = fz.featurize_sparse(train_pos + train_neg)
    y = np.concatenate([np.ones(len(train_pos)), np.zeros(len(train_neg))]).astype(np.int64)
    print(f"[{kind}] featurized train in {time.time() - t_start:.0f}s; nnz/row {X.nnz / X.shape[0]:.0f}", flush=True)
    t0 = time.time()
    params = train_mlp(X, y, hidden=hidden, alpha=alpha, epochs=epochs, seed=seed)
    print(f"[{kind}] trained in {time.time() - t0:.0f}s", flush=True)

    # calibration on held-out benign: the sets without a target of their own are pooled
    pooled = [t for k, v in split.calib.items() if k not in split.calib_targets for t in v]
    groups = [("pooled", fz.featurize_sparse(pooled), cfg["target_fpr"])]
    groups += [(k, fz.featurize_sparse(split.calib[k]), f) for k, f in split.calib_targets.items()]
    params, spec["operating_point"] = calibrate(params, groups, {k: len(v) for k, v in split.calib.items()})
    # `input` tells the Rust executor which graph inputs to build (see onnx_export.export_onnx).
    spec["input"] = "sparse"
    spec["model"] = {"arch": f"mlp {spec['dim']}-{hidden}-1 relu sigmoid", "hidden": hidden,
                     "inputs": ["indices", "values"], "output": "score"}
    write_json(os.path.join(out_dir, "featurizer.json"), spec)
    onnx_path = os.path.join(out_dir, "model.onnx")
    export_onnx(params, onnx_path, f"rampart_{kind.replace('-', '_')}",
                f"Rampart {kind} detector v1: hashed n-grams -> MLP; score > 0.5 = attack")

    scores = score_sets(onnx_path, fz, split.test)
    m = held_out_metrics(onnx_path, fz, split, scores)
    m["onnx_bytes"] = os.path.getsize(onnx_path)
    m["train_counts"] = {"attack": len(train_pos), "benign": len(train_neg)}
    m["seconds"] = time.time() - t_start
    m["train_args"] = {"hidden": hidden, "alpha": alpha, "epochs": epochs, "seed": seed}
    m["operating_point"] = spec["operating_point"]
    m.update(diagnostics(kind, onnx_path, fz, split, scores, cfg["prep"]))
    write_json(os.path.join(out_dir, "metrics.json"), m)

    parity = parity_texts(kind, split.test, split.attack_keys, split.benign_keys)
    write_parity(out_dir, onnx_path, parity)
    write_card(kind, out_dir, spec, m, len(parity))
    print(json.dumps({k: v for k, v in m.items() if k not in ("examples", "hard_negatives_flagged")}, indent=2))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", choices=list(MODELS))
    ap.add_argument("--data", required=True, help="dataset folder (e.g. ../shared/datasets)")
    ap.add_argument("--out", required=True, help="output folder (e.g. models/sqli)")
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--alpha", type=float, default=1e-5, help="L2 penalty")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    run(a.model, a.data, a.out, a.hidden, a.epochs, a.alpha, a.seed)


if __name__ == "__main__":
    main()
