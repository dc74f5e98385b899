"""Hashed n-gram featurizer shared (by spec) with `scoring/src/model/features.rs`.

The spec lives in `models/<name>/featurizer.json`; the Rust side reads the same file, so
both sides agree on every constant. Algorithm (must stay identical to the Rust code):

1. `b = text.encode("utf-8")[:max_bytes]`, then ASCII upper-case letters are folded to
   lower case byte-wise (bytes >= 0x80 are kept unchanged).
2. For every family in `families`:
   - `{"kind": "char", "n": n, "seed": s}`: every window `b[i:i+n]` (byte n-gram).
   - `{"kind": "word", "n": n, "seed": s}`: words are maximal runs of bytes that are ASCII
     `[a-z0-9]` or >= 0x80; every run of `n` consecutive words, joined by one space byte.
   The hash is 32-bit FNV-1a whose state starts at the offset basis, then absorbs the 4
   little-endian bytes of the family seed `s`, then the n-gram bytes. bucket = hash % dim.
3. `counts[bucket] += 1` over all families (collisions simply add).
4. `x = log1p(counts)`, then `x /= ||x||_2` (a text with no n-gram stays all zero).

The exported model takes the non-zero entries only (`padded`): `indices` int64 [N, K] and
`values` float32 [N, K], each row's buckets in ascending order, K = the most non-zero buckets of
any row in the batch (at least 1); shorter rows are padded with index 0 and value 0.0, which adds
exactly nothing (W1[0] * 0.0). The dense row is the same function, so `featurize_dense` stays for
tests and tools.
"""

from __future__ import annotations

import json
import re

import numpy as np

FNV_OFFSET = 0x811C9DC5
FNV_PRIME = 0x01000193
MASK = 0xFFFFFFFF

_LOWER = bytes(range(256)).translate(
    bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
)
_WORD_RE = re.compile(rb"[a-z0-9\x80-\xff]+")


def fnv_absorb(h: int, data: bytes) -> int:
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & MASK
    return h


def seed_state(seed: int) -> int:
    return fnv_absorb(FNV_OFFSET, int(seed).to_bytes(4, "little"))


class Featurizer:
    def __init__(self, spec: dict):
        self.spec = spec
        self.dim = int(spec["dim"])
        self.max_bytes = int(spec["max_bytes"])
        self.families = spec["families"]
        self._states = [seed_state(f["seed"]) for f in self.families]
        self._word_cache: list[dict] = [dict() for _ in self.families]

    @classmethod
    def from_file(cls, path: str) -> "Featurizer":
        with open(path, "r", encoding="utf-8") as f:
            return cls(json.load(f))

    def prepare(self, text: str) -> bytes:
        return text.encode("utf-8")[: self.max_bytes].translate(_LOWER)

    def _char_hashes(self, arr: np.ndarray, n: int, state: int) -> np.ndarray:
        m = arr.shape[0] - n + 1
        if m <= 0:
            return np.empty(0, dtype=np.uint32)
        h = np.full(m, state, dtype=np.uint32)
        prime = np.uint32(FNV_PRIME)
        for k in range(n):
            h = (h ^ arr[k : k + m]) * prime  # uint32 arithmetic wraps mod 2**32
        return h

    def _word_hashes(self, words: list[bytes], n: int, fi: int) -> list[int]:
        cache = self._word_cache[fi]
        state = self._states[fi]
        out = []
        for i in range(len(words) - n + 1):
            key = b" ".join(words[i : i + n])
            h = cache.get(key)
            if h is None:
                h = fnv_absorb(state, key)
                if len(cache) < 2_000_000:
                    cache[key] = h
            out.append(h)
        return out

    def bucket_counts(self, text: str) -> dict[int, int]:
        b = self.prepare(text)
        arr = np.frombuffer(b, dtype=np.uint8).astype(np.uint32)
        words = None
        parts = []
        for fi, fam in enumerate(self.families):
            n = int(fam["n"])
            if fam["kind"] == "char":
                parts.append(self._char_hashes(arr, n, self._states[fi]))
            elif fam["kind"] == "word":
                if words is None:
                    words = _WORD_RE.findall(b)
                parts.append(np.asarray(self._word_hashes(words, n, fi), dtype=np.uint32))
            else:
                raise ValueError(f"unknown family kind {fam['kind']!r}")
        if not parts:
            return {}
        allh = np.concatenate(parts).astype(np.uint64) % np.uint64(self.dim)
        idx, cnt = np.unique(allh, return_counts=True)
        return dict(zip(idx.tolist(), cnt.tolist()))

    def featurize_sparse(self, texts):
        """Returns a scipy CSR matrix [len(texts), dim] of float32."""
        import scipy.sparse as sp

        indptr = [0]
        indices = []
        data = []
        for t in texts:
            c = self.bucket_counts(t)
            if c:
                idx = np.fromiter(c.keys(), dtype=np.int64, count=len(c))
                val = np.log1p(np.fromiter(c.values(), dtype=np.float64, count=len(c)))
                val /= np.sqrt(np.sum(val * val))
                order = np.argsort(idx)
                indices.append(idx[order])
                data.append(val[order].astype(np.float32))
                indptr.append(indptr[-1] + len(c))
            else:
                indptr.append(indptr[-1])
        ind = np.concatenate(indices) if indices else np.empty(0, dtype=np.int64)
        dat = np.concatenate(data) if data else np.empty(0, dtype=np.float32)
        return sp.csr_matrix((dat, ind, np.asarray(indptr)), shape=(len(texts), self.dim), dtype=np.float32)

    def featurize_dense(self, texts) -> np.ndarray:
        return self.featurize_sparse(texts).toarray().astype(np.float32)


def padded(X) -> tuple[np.ndarray, np.ndarray]:
    """The sparse model input of a CSR feature matrix: `(indices int64 [N, K], values float32
    [N, K])` with K = max(1, most non-zeros in a row); padding is index 0, value 0.0."""
    X = X.tocsr()
    X.sort_indices()
    nnz = np.diff(X.indptr)
    n = X.shape[0]
    k = max(1, int(nnz.max()) if n else 1)
    idx = np.zeros((n, k), dtype=np.int64)
    val = np.zeros((n, k), dtype=np.float32)
    # Position of every stored entry inside its row, then one scatter for the whole matrix.
    rows = np.repeat(np.arange(n), nnz)
    cols = np.arange(X.nnz) - np.repeat(X.indptr[:-1], nnz)
    idx[rows, cols] = X.indices
    val[rows, cols] = X.data
    return idx, val
