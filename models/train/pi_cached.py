"""Fine-tuning the top of the encoder from cached bottom activations (`pi_finetune --cache-bottom N`).

On 2 CPU cores one epoch of v3's recipe (layers 2-5 trained, 16k windows) took 47 min, so v3 saw
its data once. Frozen layers compute the same thing every epoch: with the embeddings and the
bottom N layers frozen, their output for each training window is computed once (no gradient,
eval mode) and kept as float16 at the window's own length; every epoch then runs only the top
6-N layers, the pooling and the head. Padding added when batching never reaches a real token
(the additive attention mask hides it in every layer above), so a cached window gives the same
activations as one run through the whole encoder, up to float16 rounding and the dropout the
frozen layers would have applied in training mode."""

from __future__ import annotations

import random
import time

from pi_model import pad


def cache_bottom(module, examples, layers: int, batch_size: int = 64) -> list:
    """Hidden states after the embeddings and the bottom `layers` encoder layers, one float16
    tensor (tokens x hidden) per example, computed in length-sorted batches."""
    import torch

    module.eval()
    order = sorted(range(len(examples)), key=lambda i: len(examples[i][0]))
    out: list = [None] * len(examples)
    t0 = time.time()
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            ids, mask = pad([examples[i][0] for i in idx])
            hidden = module.encoder(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                                    output_hidden_states=True).hidden_states[layers]
            for row, i in enumerate(idx):
                out[i] = hidden[row, :len(examples[i][0])].to(torch.float16).clone()
            if (start // batch_size) % 50 == 0:
                print(f"[pi] cached {start + len(idx)}/{len(order)} windows {time.time() - t0:.0f}s", flush=True)
    return out


def _top_logits(module, hidden, mask, layers: int):
    """The encoder from layer `layers` up, then the classifier's pooling and head."""
    ext = module.encoder.get_extended_attention_mask(mask, mask.shape)
    h = hidden
    for layer in module.encoder.encoder.layer[layers:]:
        h = layer(h, attention_mask=ext)[0]
    return module.pooled_logits(h, mask)


def check_cache(module, examples, cache, layers: int, samples: int = 24, tol: float = 0.05) -> float:
    """Refuses to train when the cached path and the whole encoder disagree on a logit by more
    than `tol` (float16 rounding moves a logit by ~1e-3): a wrong mask or layer offset would
    otherwise train a model that the export (which runs the whole encoder) does not reproduce."""
    import torch

    module.eval()
    picks = random.Random(1).sample(range(len(examples)), min(samples, len(examples)))
    worst = 0.0
    with torch.no_grad():
        hidden, mask = _batch(cache, picks)
        cached = _top_logits(module, hidden, mask, layers)
        ids, full_mask = pad([examples[i][0] for i in picks])
        full = module.logits(torch.from_numpy(ids), torch.from_numpy(full_mask))
        worst = float((cached - full).abs().max())
    print(f"[pi] cached path vs whole encoder: max |logit difference| {worst:.5f} over {len(picks)} windows", flush=True)
    if worst > tol:
        raise SystemExit(f"pi_cached: cached activations disagree with the encoder ({worst:.4f} > {tol})")
    return worst


def _batch(cache, picks):
    import torch

    width = max(cache[i].shape[0] for i in picks)
    hidden = torch.zeros((len(picks), width, cache[picks[0]].shape[1]), dtype=torch.float32)
    mask = torch.zeros((len(picks), width), dtype=torch.int64)
    for row, i in enumerate(picks):
        n = cache[i].shape[0]
        hidden[row, :n] = cache[i].float()
        mask[row, :n] = 1
    return hidden, mask


def batch_logits(module, cache, layers: int):
    """pi_finetune.train's `batch_logits` over the cached activations (on the CPU, where the
    cache is): a batch of example indices -> their logits from the top layers."""

    def logits(batch):
        hidden, mask = _batch(cache, batch)
        return _top_logits(module, hidden, mask, layers)

    return logits
