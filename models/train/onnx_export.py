"""The exported network: a hand-built ONNX graph (opset 17), its numpy twin for calibration, and
the output-bias shift that moves the chosen operating point to exactly 0.5, so that Rampart can use
one fixed threshold for every model."""

from __future__ import annotations

import numpy as np


def logits(params, X) -> np.ndarray:
    """The graph up to the sigmoid, in numpy: calibration happens before the graph is exported."""
    W1, b1, W2, b2 = params
    h = np.maximum(X @ W1 + b1, 0.0)
    return (np.asarray(h) @ W2 + b2).ravel().astype(np.float64)


def export_onnx(params, path: str, name: str, doc: str):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    W1, b1, W2, b2 = params
    dim, hidden = W1.shape
    inits = [
        numpy_helper.from_array(W1, "W1"),
        numpy_helper.from_array(b1.reshape(hidden), "b1"),
        numpy_helper.from_array(W2.reshape(hidden, 1), "W2"),
        numpy_helper.from_array(b2.reshape(1), "b2"),
    ]
    nodes = [
        helper.make_node("MatMul", ["features", "W1"], ["h_mm"], name="fc1"),
        helper.make_node("Add", ["h_mm", "b1"], ["h_pre"], name="fc1_bias"),
        helper.make_node("Relu", ["h_pre"], ["h"], name="relu"),
        helper.make_node("MatMul", ["h", "W2"], ["z_mm"], name="fc2"),
        helper.make_node("Add", ["z_mm", "b2"], ["logit"], name="fc2_bias"),
        helper.make_node("Sigmoid", ["logit"], ["score"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", dim])],
        [helper.make_tensor_value_info("score", TensorProto.FLOAT, ["N", 1])],
        initializer=inits,
    )
    model = helper.make_model(graph, producer_name="rampart-train", producer_version="1",
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


def ort_scores(path: str, X) -> np.ndarray:
    """Scores a (sparse or dense) feature matrix with onnxruntime, densifying 512 rows at a time."""
    sess = ort_session(path)
    out = []
    for i in range(0, X.shape[0], 512):
        chunk = X[i:i + 512]
        chunk = chunk.toarray() if hasattr(chunk, "toarray") else chunk
        out.append(sess.run(["score"], {"features": np.ascontiguousarray(chunk, dtype=np.float32)})[0].ravel())
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


def calibrate(params, X_cal, target_fpr: float, calib_counts: dict):
    """Shifts the output bias so that logit 0 (score 0.5) is the operating point with FPR <= target_fpr
    on the benign calibration features. Returns the shifted parameters and the operating point."""
    z_thr = threshold_at_fpr(logits(params, X_cal), target_fpr)
    W1, b1, W2, b2 = params
    b2_cal = (b2.astype(np.float64) - z_thr).astype(np.float32)
    params = (W1, b1, W2, b2_cal)
    # Re-measured because the shifted bias is rounded to float32.
    calib_fpr = float(np.mean(logits(params, X_cal) > 0))
    op = {
        "target_fpr": target_fpr,
        "calibration_sets": calib_counts,
        "calibration_fpr_at_0.5": calib_fpr,
        "bias_shift_logit": -z_thr,
        "pre_shift_threshold": float(1.0 / (1.0 + np.exp(-z_thr))),
        "threshold": 0.5,
    }
    return params, op
