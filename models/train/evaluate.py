"""Held-out evaluation of the exported model. Every score comes from onnxruntime on the saved
graph, not from the sklearn object, so the numbers describe the file that ships."""

from __future__ import annotations

import re
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from featurize import Featurizer
from onnx_export import ort_feed, ort_scores, ort_session, threshold_at_fpr


PROBES = {
    "sqli": [
        ("O'Brien", "benign"), ("select a size from the drop-down menu", "benign"), ("5 < 6 and 7 > 3", "benign"),
        ("50% off -- today only!", "benign"), ("We need to union the two sets and select the max", "benign"),
        ("$19.99", "benign"), ("25%", "benign"), ("D'Angelo", "benign"), ("1", "benign"), ("42", "benign"),
        ("john.smith@example.com", "benign"), ("Rock 'n' Roll", "benign"), ("2024-05-01", "benign"),
        ("' or 1=1 --", "attack"), ("1' union select username, password from users--", "attack"),
        ("admin'--", "attack"), ("1; drop table users", "attack"), ("1 and sleep(5)", "attack"),
        ("' and extractvalue(1,concat(0x7e,version()))--", "attack"), ("1) or (1=1", "attack"),
    ],
}


def jbb_group(t: str) -> str:
    """Heuristic grouping of jailbreakbench prompts (the data file carries no method field)."""
    if "AIM" in t and "Niccolo" in t:
        return "JBC (AIM template)"
    if len(t) > 1500:
        return "long template prompts (random-search style)"
    if len(t) < 600 and re.search(r"[\[\]{}()|\\]{2,}|[^\x00-\x7f]", t[-120:]):
        return "GCG-like (request + adversarial suffix)"
    return "PAIR-like / other (short persuasion or role-play)"


def tpr_at(attack_logits, benign_logits, fpr) -> tuple[float, float]:
    t = threshold_at_fpr(benign_logits, fpr)
    return float(np.mean(attack_logits > t)), float(np.mean(benign_logits > t))


def ort_latency(path: str, fz: Featurizer, texts: list[str]) -> dict:
    sess = ort_session(path)
    X1 = ort_feed(sess, fz.featurize_sparse(texts[:1]))
    for _ in range(20):
        sess.run(["score"], X1)
    t0 = time.perf_counter()
    reps = 200
    for _ in range(reps):
        sess.run(["score"], X1)
    single = (time.perf_counter() - t0) / reps
    X32 = ort_feed(sess, fz.featurize_sparse((texts * 32)[:32]))
    t0 = time.perf_counter()
    for _ in range(50):
        sess.run(["score"], X32)
    batch = (time.perf_counter() - t0) / 50 / 32
    return {"ort_python_batch1_ms": single * 1e3, "ort_python_batch32_per_text_ms": batch * 1e3}


def _logit(s: np.ndarray) -> np.ndarray:
    # Clipped so that saturated scores do not become +-inf in the threshold sweep.
    s = np.clip(s, 1e-12, 1 - 1e-7)
    return np.log(s / (1 - s))


def score_sets(onnx_path: str, fz: Featurizer, test_sets: dict) -> dict:
    scores = {}
    for k, v in test_sets.items():
        s = ort_scores(onnx_path, fz.featurize_sparse(v)) if v else np.empty(0)
        scores[k] = s.astype(np.float64)
    return scores


def held_out_metrics(onnx_path: str, fz: Featurizer, split, scores: dict) -> dict:
    """Rates at the shipped threshold (0.5), TPR at fixed FPRs (threshold re-set on the benign test
    set), ROC AUC and latency."""
    test_sets, attack_keys = split.test, split.attack_keys
    attack = np.concatenate([scores[k] for k in attack_keys])
    benign = np.concatenate([scores[k] for k in split.benign_keys])
    m = {"per_set": {}, "overlap_removed": split.overlap}
    for k, s in scores.items():
        m["per_set"][k] = {"n": int(len(s)), "flagged_at_0.5": float(np.mean(s > 0.5)) if len(s) else None}
    m["tpr_at_0.5"] = float(np.mean(attack > 0.5))
    m["fpr_at_0.5"] = float(np.mean(benign > 0.5))
    m["n_attack"], m["n_benign"] = int(len(attack)), int(len(benign))
    for f_ in [0.0001, 0.001, 0.01]:
        tpr, fpr = tpr_at(_logit(attack), _logit(benign), f_)
        m[f"tpr_at_fpr_{f_}"] = tpr
        m[f"actual_fpr_at_fpr_{f_}"] = fpr
    try:
        m["auc"] = float(roc_auc_score(np.r_[np.ones(len(attack)), np.zeros(len(benign))], np.r_[attack, benign]))
    except ValueError:
        pass  # only one class present (an empty test side); the card prints nan
    lat_texts = test_sets[attack_keys[0]][:1]
    m["latency"] = ort_latency(onnx_path, fz, lat_texts)
    return m


def diagnostics(kind: str, onnx_path: str, fz: Featurizer, split, scores: dict, prep) -> dict:
    """Examples for the model card: worst misses and false positives per set, the fixed probes,
    jailbreakbench recall by group and the hard negatives that are still flagged."""
    test_sets, attack_keys = split.test, split.attack_keys
    ex = {}
    for k in test_sets:
        s = scores[k]
        v = test_sets[k]
        if k in attack_keys:
            idx = np.argsort(s)[:5]
        else:
            idx = np.argsort(-s)[:5]
        ex[k] = [(v[i][:160], float(s[i])) for i in idx]
    m = {"examples": ex}
    probes = PROBES[kind]
    ps = ort_scores(onnx_path, fz.featurize_sparse([prep(t) for t, _ in probes]))
    m["probes"] = [{"text": t, "expected": e, "score": float(x)} for (t, e), x in zip(probes, ps)]
    # Every generated hard-negative test set: the texts still flagged, highest first.
    m["hard_negatives_flagged"] = {
        k: sorted([(t, float(sc)) for t, sc in zip(test_sets[k], scores[k]) if sc > 0.5], key=lambda x: -x[1])
        for k in test_sets if k.startswith("hard")}
    if split.hn_train:
        hn_tr = sorted(set(split.hn_train) & set(split.train_neg))
        s_tr = ort_scores(onnx_path, fz.featurize_sparse(hn_tr)) if hn_tr else np.empty(0)
        m["hard_negatives_train_flagged"] = float(np.mean(s_tr > 0.5)) if len(s_tr) else None
    return m
