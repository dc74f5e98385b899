"""The prompt-injection transformer: tokenisation and windowing (mirrored by the Rust executor),
the torch module that is fine-tuned, and the ONNX export -> fusion -> int8 pipeline.

Windowing contract (written to model.json, read by scoring/src/model/transformer.rs):
a text is tokenised without special tokens and without truncation; windows of `window` content
tokens start every `stride` tokens, the last window is aligned to the end of the text; each
window is wrapped as [CLS] ... [SEP]; the text's score is the max over its windows. Texts with
more than `max_windows` windows are scored on `max_windows` windows spread evenly from the first
to the last (documented in docs/RATIONALE.md), so cost per field is bounded."""

from __future__ import annotations

import os

import numpy as np

WINDOW = 126  # content tokens; +[CLS] +[SEP] = 128
STRIDE = 96
MAX_WINDOWS = 32


def load_tokenizer(path: str):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(path)
    # tokenizer.json ships with truncation at 128 and padding: both would silently cut text.
    tok.no_truncation()
    tok.no_padding()
    return tok


def window_starts(n: int, window: int = WINDOW, stride: int = STRIDE, max_windows: int = MAX_WINDOWS) -> list[int]:
    if n <= window:
        return [0]
    starts = list(range(0, n - window, stride)) + [n - window]
    if len(starts) > max_windows:
        last = len(starts) - 1
        starts = [starts[(i * last) // (max_windows - 1)] for i in range(max_windows)]
    return starts


def windows(ids: list[int], cls_id: int, sep_id: int) -> list[list[int]]:
    return [[cls_id] + ids[s:s + WINDOW] + [sep_id] for s in window_starts(len(ids))]


class Windowing:
    def __init__(self, tokenizer_path: str):
        self.tok = load_tokenizer(tokenizer_path)
        self.cls = self.tok.token_to_id("[CLS]")
        self.sep = self.tok.token_to_id("[SEP]")

    def text_windows(self, texts: list[str]) -> list[list[list[int]]]:
        encs = self.tok.encode_batch(texts, add_special_tokens=False)
        return [windows(e.ids, self.cls, self.sep) for e in encs]


def pad(batch: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    width = max(len(w) for w in batch)
    ids = np.zeros((len(batch), width), dtype=np.int64)
    mask = np.zeros((len(batch), width), dtype=np.int64)
    for i, w in enumerate(batch):
        ids[i, :len(w)] = w
        mask[i, :len(w)] = 1
    return ids, mask


def build_module(base_dir: str):
    import torch
    from transformers import BertModel

    class Classifier(torch.nn.Module):
        """MiniLM encoder -> attention-masked mean pooling (as the sentence-transformers model was
        trained) -> linear head -> logit - shift. `shift` is set after calibration so that the
        chosen operating point is exactly score 0.5."""

        def __init__(self):
            super().__init__()
            self.encoder = BertModel.from_pretrained(base_dir, add_pooling_layer=False, attn_implementation="eager")
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)
            self.register_buffer("shift", torch.zeros(1))

        def logits(self, input_ids, attention_mask):
            h = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            return self.pooled_logits(h, attention_mask)

        def pooled_logits(self, h, attention_mask):
            """The encoder's last hidden states -> masked mean -> head -> logit - shift (also
            the end of pi_cached's top-of-encoder path)."""
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
            return self.head(pooled).squeeze(-1) - self.shift

        def forward(self, input_ids, attention_mask):
            return torch.sigmoid(self.logits(input_ids, attention_mask)).unsqueeze(-1)

    return Classifier()


def export(module, out_dir: str, version: int) -> dict:
    """torch -> ONNX (opset 17) -> ORT BERT fusion -> dynamic int8 (per-channel). Returns paths."""
    import onnx
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer

    tmp = os.path.join(out_dir, "_build")
    os.makedirs(tmp, exist_ok=True)
    fp32 = os.path.join(tmp, "model.fp32.onnx")
    fused = os.path.join(tmp, "model.fused.onnx")
    final = os.path.join(out_dir, "model.onnx")
    module = module.eval()
    ids = torch.randint(1000, 20000, (2, 16))
    with torch.no_grad():
        torch.onnx.export(module, (ids, torch.ones_like(ids)), fp32, input_names=["input_ids", "attention_mask"],
                          output_names=["score"], opset_version=17, dynamo=False,
                          dynamic_axes={"input_ids": {0: "batch", 1: "tokens"},
                                        "attention_mask": {0: "batch", 1: "tokens"}, "score": {0: "batch"}})
    cfg = module.encoder.config
    # Fusion (Attention, SkipLayerNorm, BiasGelu, EmbedLayerNorm) is what makes 128-token windows
    # fast enough on 2 cores; it must run before quantisation, which then sees plain MatMuls.
    opt = optimizer.optimize_model(fp32, model_type="bert", num_heads=cfg.num_attention_heads,
                                   hidden_size=cfg.hidden_size, opt_level=1)
    opt.save_model_to_file(fused)
    quantize_dynamic(fused, final, per_channel=True, weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    m = onnx.load(final)
    weights_to_uint8(m)
    m.doc_string = f"Rampart prompt-injection detector v{version}: MiniLM-L6 fine-tuned, int8; score > 0.5 = attack"
    onnx.save(m, final)
    return {"fp32": fp32, "fused": fused, "final": final}


def weights_to_uint8(model) -> int:
    """Shift every int8 weight and weight zero point of MatMulInteger/QAttention by +128 to uint8.

    (w - zp) is unchanged, so the model computes the same integers, but ONNX Runtime then uses its
    u8u8 kernels. With int8 weights it uses u8s8 kernels, which on CPUs without AVX-512 VNNI sum
    pairs of products in saturating 16-bit lanes (vpmaddubsw): on such a CPU the same model scored
    a plain jailbreak 0.456 instead of 0.679. Returns how many tensors were shifted."""
    import onnx
    from onnx import numpy_helper

    weight_inputs = {"MatMulInteger": (1, 3), "QAttention": (1, 7)}
    names = {n.input[i] for n in model.graph.node for i in weight_inputs.get(n.op_type, ()) if i < len(n.input)}
    shifted = 0
    for tensor in model.graph.initializer:
        if tensor.name in names and tensor.data_type == onnx.TensorProto.INT8:
            values = numpy_helper.to_array(tensor).astype(np.int16) + 128
            tensor.CopyFrom(numpy_helper.from_array(values.astype(np.uint8), tensor.name))
            shifted += 1
    return shifted


def ort_session(path: str, threads: int = 2):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_text_scores(sess, win: Windowing, texts: list[str]) -> np.ndarray:
    """Max-over-windows score per text, each window run alone (batch 1) exactly as the Rust
    executor does: dynamic int8 quantisation makes batched scores depend on batch companions."""
    out = np.zeros(len(texts), dtype=np.float32)
    for ti, ws in enumerate(win.text_windows(texts)):
        for w in ws:
            ids = np.asarray([w], dtype=np.int64)
            s = sess.run(["score"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0, 0]
            out[ti] = max(out[ti], s)
    return out
