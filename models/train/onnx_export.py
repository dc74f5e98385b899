"""The exported network: a hand-built sparse-input ONNX graph (opset 17), its numpy twin for calibration, and
the output-bias shift that moves the chosen operating point to exactly 0.5, so that Rampart can use
one fixed threshold for every model."""

from __future__ import annotations

import numpy as np

from featurize import padded


def logits(params, X) -> np.ndarray:
    """The graph up to the sigmoid, in numpy: calibration happens before the graph is exported."""
    W1, b1, W2, b2 = params
    h = np.maximum(X @ W1 + b1, 0.0)
    return (np.asarray(h) @ W2 + b2).ravel().astype(np.float64)


def export_onnx(params, path: str, name: str, doc: str):
    """Writes the sparse-input graph. It computes exactly `logits` + sigmoid of the dense row, but
    reads only the K non-zero features of each text instead of all DIM inputs:

        rows = Gather(W1, indices)                          [N, K, H]
        h    = sum_k values[n, k] * rows[n, k, :]           [N, H]
        score = Sigmoid(Relu(h + b1) @ W2 + b2)             [N, 1]

    A hashed n-gram row of a short field has a few dozen to a few thousand non-zeros out of
    32,768, so this replaces a 32768xH MatMul (and a 128 KB input per text) by K row lookups.
    Padding entries (index 0, value 0.0) contribute W1[0] * 0.0 = 0.

    The weighted sum over K is written as a batched MatMul, values [N, 1, K] @ rows [N, K, H],
    rather than Mul(rows, values[..., None]) + ReduceSum(axis K): the same sum, but onnxruntime
    1.22 (CPU, one thread) runs it 2-3x faster (prose field, K=489: 19 us vs 50 us per call;
    the broadcast Mul and the middle-axis ReduceSum are generic kernels, MatMul goes to MLAS)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    W1, b1, W2, b2 = params
    dim, hidden = W1.shape
    inits = [
        numpy_helper.from_array(W1, "W1"),
        numpy_helper.from_array(b1.reshape(hidden), "b1"),
        numpy_helper.from_array(W2.reshape(hidden, 1), "W2"),
        numpy_helper.from_array(b2.reshape(1), "b2"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis_1"),
    ]
    nodes = [
        helper.make_node("Gather", ["W1", "indices"], ["rows"], name="fc1_gather", axis=0),
        helper.make_node("Unsqueeze", ["values", "axis_1"], ["values_row"], name="values_row"),
        helper.make_node("MatMul", ["values_row", "rows"], ["h_row"], name="fc1_weighted_sum"),
        helper.make_node("Squeeze", ["h_row", "axis_1"], ["h_mm"], name="fc1_squeeze"),
        helper.make_node("Add", ["h_mm", "b1"], ["h_pre"], name="fc1_bias"),
        helper.make_node("Relu", ["h_pre"], ["h"], name="relu"),
        helper.make_node("MatMul", ["h", "W2"], ["z_mm"], name="fc2"),
        helper.make_node("Add", ["z_mm", "b2"], ["logit"], name="fc2_bias"),
        helper.make_node("Sigmoid", ["logit"], ["score"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("indices", TensorProto.INT64, ["N", "K"]),
         helper.make_tensor_value_info("values", TensorProto.FLOAT, ["N", "K"])],
        [helper.make_tensor_value_info("score", TensorProto.FLOAT, ["N", 1])],
        initializer=inits,
    )
    model = helper.make_model(graph, producer_name="rampart-train", producer_version="2",
                              opset_imports=[helper.make_opsetid("", 17)], doc_string=doc)
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


def ort_session(path: str):
    """One intra-op thread: the scores and latencies are those of a WAF worker, not of a batch job."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_feed(sess, X) -> dict:
    """The input dict for `sess` from a (CSR or dense) feature block: `indices`/`values` for a
    sparse-input graph, `features` for an old dense one."""
    names = {i.name for i in sess.get_inputs()}
    if "indices" in names:
        import scipy.sparse as sp

        idx, val = padded(X if sp.issparse(X) else sp.csr_matrix(X))
        return {"indices": idx, "values": val}
    dense = X.toarray() if hasattr(X, "toarray") else X
    return {"features": np.ascontiguousarray(dense, dtype=np.float32)}


def ort_scores(path: str, X) -> np.ndarray:
    """Scores a (sparse or dense) feature matrix with onnxruntime, 512 rows at a time."""
    sess = ort_session(path)
    out = []
    for i in range(0, X.shape[0], 512):
        out.append(sess.run(["score"], ort_feed(sess, X[i:i + 512]))[0].ravel())
    return np.concatenate(out) if out else np.empty(0, dtype=np.float32)


def threshold_at_fpr(benign_logits: np.ndarray, fpr: float) -> float:
    """Logit threshold t with #(benign > t) <= floor(fpr * n), placed midway in the gap above
    the k-th highest benign logit."""
    s = np.sort(benign_logits)[::-1]
    k = min(int(np.floor(fpr * len(s))), len(s) - 1)
    t = float(s[k])
    # Ties (frequency-weighted data repeats values): move halfway to the next larger distinct
    # value, so that float32 rounding cannot push the tied texts over the threshold.
    above = s[s > t]
    return (t + float(above.min())) / 2 if len(above) else t + 1.0


def calibrate(params, groups: list[tuple[str, object, float]], calib_counts: dict):
    """Shifts the output bias so that logit 0 (score 0.5) is the operating point. `groups` is a list
    of `(label, X, target_fpr)`: benign calibration features and the most FPR allowed on them; the
    operating point is the strictest (highest) of the per-group thresholds, so every group stays
    within its target. Returns the shifted parameters and the operating point."""
    per_group = {label: threshold_at_fpr(logits(params, X), fpr) for label, X, fpr in groups}
    z_thr = max(per_group.values())
    W1, b1, W2, b2 = params
    b2_cal = (b2.astype(np.float64) - z_thr).astype(np.float32)
    params = (W1, b1, W2, b2_cal)
    # Re-measured because the shifted bias is rounded to float32.
    fpr_after = {label: float(np.mean(logits(params, X) > 0)) for label, X, _ in groups}
    op = {
        "target_fpr": {label: fpr for label, _, fpr in groups},
        "calibration_sets": calib_counts,
        "calibration_fpr_at_0.5": fpr_after,
        "group_thresholds_logit": per_group,
        "deciding_group": max(per_group, key=per_group.get),
        "bias_shift_logit": -z_thr,
        "pre_shift_threshold": float(1.0 / (1.0 + np.exp(-z_thr))),
        "threshold": 0.5,
    }
    return params, op
