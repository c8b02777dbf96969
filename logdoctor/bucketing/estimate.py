"""Estimate a bucket plan from the per-batch length statistics a training log printed."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from logdoctor.bucketing.plan import BucketPlan, recommend
from logdoctor.errors import ConfigError


def lengths_from_batches(
    len_mean: ArrayLike, seqs: ArrayLike, len_min: ArrayLike | None = None, len_max: ArrayLike | None = None
) -> NDArray[np.int64]:
    """A length sample consistent with each logged batch's size, mean, min and max.

    Each batch of n sequences contributes its min and its max (when logged) and n − 2 copies of
    the length that keeps the batch's mean, clipped into [min, max]. Sorted batches have narrow
    ranges, so this recovers the dataset's length distribution closely; wide batches only
    approximately (their interior shape is not in the log). Rows with a missing value are skipped.
    """
    mean = np.asarray(len_mean, dtype=np.float64)
    n = np.rint(np.asarray(seqs, dtype=np.float64))
    lo = mean if len_min is None else np.asarray(len_min, dtype=np.float64)
    hi = mean if len_max is None else np.asarray(len_max, dtype=np.float64)
    ok = np.isfinite(mean) & np.isfinite(n) & np.isfinite(lo) & np.isfinite(hi) & (n >= 1)
    mean, n, lo, hi = mean[ok], n[ok].astype(np.int64), lo[ok], hi[ok]
    if mean.size == 0:
        raise ConfigError("no batch with finite len_mean and seqs to estimate lengths from")
    inner_n = np.maximum(n - 2, 0)
    inner = np.where(inner_n > 0, (n * mean - lo - hi) / np.maximum(inner_n, 1), mean)
    inner = np.clip(inner, lo, hi)
    ends_lo = np.where(n >= 2, lo, mean)  # a batch of one has only its mean
    parts = [np.repeat(inner, inner_n), ends_lo, hi[n >= 2]]
    return np.maximum(np.rint(np.concatenate(parts)), 1).astype(np.int64)


def estimate_from_batches(
    len_mean: ArrayLike,
    seqs: ArrayLike,
    *,
    len_min: ArrayLike | None = None,
    len_max: ArrayLike | None = None,
    token_budget: int | None = None,
    buckets: int | None = None,
    max_padding: float | None = None,
    shuffles: int = 2,
    seed: int = 0,
) -> BucketPlan:
    """A bucket plan for the lengths a log saw (one epoch of its batches is enough).

    Args:
        len_mean, seqs: per-batch mean length and sequence count (one entry per logged step).
        len_min, len_max: per-batch extremes, when logged (better estimates).
        token_budget: the batch budget; by default the 95th percentile of seqs × len_max (or
            × len_mean), i.e. the padded size the pipeline's batches reached.
        buckets, max_padding: as in ``recommend`` (default: fewest buckets with ≤ 10% padding).
        shuffles, seed: simulation settings, as in ``recommend``.

    Returns:
        The plan; ``plan.summary()`` is one sentence for a hint.
    """
    lengths = lengths_from_batches(len_mean, seqs, len_min, len_max)
    if token_budget is None:
        top = np.asarray(len_max if len_max is not None else len_mean, dtype=np.float64)
        padded = np.asarray(seqs, dtype=np.float64) * top
        padded = padded[np.isfinite(padded)]
        token_budget = int(max(np.percentile(padded, 95), lengths.max())) if padded.size else 0
    return recommend(
        lengths,
        token_budget,
        buckets=buckets,
        max_padding=max_padding,
        max_seq_len=min(token_budget, int(lengths.max())) if token_budget else None,
        shuffles=shuffles,
        seed=seed,
    )
