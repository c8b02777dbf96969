"""Per-batch statistics and the order-independent batch fingerprint (pure numpy)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from logdoctor.emit.keys import BATCH_KEYS, MAX_MICRO_FP

__all__ = ["BATCH_KEYS", "Pair", "batch_fingerprint", "batch_stats", "combine", "merge"]

#: One recorded batch: its record (``batch_stats`` + ``batch_fp``) and its sample indices
#: (empty when unknown: then the record has no ``batch_fp``).
Pair = tuple[dict[str, Any], np.ndarray]


def batch_stats(lengths: Iterable[int], pad_to: int | None = None) -> dict[str, int | float]:
    """Statistics of one batch from its sequence lengths.

    Args:
        lengths: the real (unpadded) length of every sequence in the batch.
        pad_to: the length every sequence is padded to, when the pipeline pads to a bucket or a
            fixed size; by default the batch's longest sequence.

    Returns:
        ``n_seq``, ``tokens`` (real tokens), ``len_mean``, ``len_min``, ``len_max`` and
        ``pad_frac`` (padding tokens / padded tokens).

    Raises:
        ValueError: an empty batch, or ``pad_to`` shorter than the longest sequence.
    """
    arr = np.asarray(lengths if isinstance(lengths, Sequence | np.ndarray) else list(lengths), dtype=np.int64)
    if arr.size == 0:
        raise ValueError("batch_stats: empty batch")
    longest = int(arr.max())
    padded_len = longest if pad_to is None else int(pad_to)
    if padded_len < longest:
        raise ValueError(f"batch_stats: pad_to={pad_to} is shorter than the longest, {longest}")
    tokens = int(arr.sum())
    return {
        "n_seq": int(arr.size),
        "tokens": tokens,
        "len_mean": tokens / arr.size,
        "len_min": int(arr.min()),
        "len_max": longest,
        "pad_frac": 1.0 - tokens / (arr.size * padded_len) if padded_len else 0.0,
    }


def batch_fingerprint(indices: Iterable[int]) -> str:
    """A short, stable, order-independent hash of a batch's sample indices.

    The same set of indices gives the same 16 hex characters in every epoch, process and
    platform: blake2b (8-byte digest) over the sorted indices as little-endian int64. Only the
    indices are hashed, never the samples' content. Repeated indices count as many times as
    they appear.
    """
    arr = np.sort(np.asarray(list(indices) if not isinstance(indices, np.ndarray) else indices, dtype=np.int64))
    return hashlib.blake2b(arr.astype("<i8").tobytes(), digest_size=8).hexdigest()


def merge(records: Sequence[dict[str, Any]], indices: Sequence[Any] = ()) -> dict[str, Any]:
    """One record for several micro-batches of one optimizer step (gradient accumulation).

    Args:
        records: ``batch_stats`` results of the micro-batches.
        indices: the micro-batches' index arrays, for the fingerprint of their union and, up to
            ``MAX_MICRO_FP`` parts, each part's own fingerprint joined by ``+`` (``micro_fp``):
            under gradient accumulation static micro-batches are paired anew every epoch, so
            only the parts recur.
    """
    if len(records) == 1 and not indices:
        return dict(records[0])
    n = sum(int(r["n_seq"]) for r in records)
    tokens = sum(int(r["tokens"]) for r in records)
    padded = sum(int(r["tokens"]) / (1.0 - float(r["pad_frac"])) if r["pad_frac"] < 1 else 0.0 for r in records)
    out: dict[str, Any] = {
        "n_seq": n,
        "tokens": tokens,
        "len_mean": tokens / n,
        "len_min": min(int(r["len_min"]) for r in records),
        "len_max": max(int(r["len_max"]) for r in records),
        "pad_frac": 1.0 - tokens / padded if padded else 0.0,
    }
    if indices:
        out["batch_fp"] = batch_fingerprint(np.concatenate([np.asarray(i, dtype=np.int64) for i in indices]))
        if 1 < len(indices) <= MAX_MICRO_FP:
            out["micro_fp"] = "+".join(batch_fingerprint(i) for i in indices)
    return out


def combine(pairs: Sequence[Pair]) -> dict[str, Any]:
    """One record for several batches (micro-batches of a step, ranks of a global batch):
    ``n_seq`` and ``tokens`` summed, ``len_mean`` weighted, min/max, ``pad_frac`` over all padded
    tokens, and ``batch_fp`` over the union of indices when every batch has its indices."""
    if not pairs:
        return {}
    fps = all("batch_fp" in rec for rec, _ in pairs)
    if len(pairs) == 1:
        return dict(pairs[0][0])
    return merge([rec for rec, _ in pairs], [idx for _, idx in pairs] if fps else [])
