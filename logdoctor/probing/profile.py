"""What only the sampler shows, measured on the walk: padding and tokens per batch, recurrence
across epochs against chance, and the fix priced on these samples' lengths."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from logdoctor.errors import LogdoctorError
from logdoctor.probing.walk import Walked
from logdoctor.samplerfacts import FixPrice, Spread

if TYPE_CHECKING:
    from logdoctor.bucketing.plan import BucketPlan

#: A token budget is rounded up to a multiple of this, as the diagnosis rounds the one it estimates.
BUDGET_ROUND = 128
#: The fix is priced on at most this many samples' lengths (a seeded uniform draw beyond it): the
#: bucket plan and its price depend on the length distribution, which 100,000 draws pin down (on
#: 1M log-normal lengths the draw's prices are within 0.2% of the whole set's, in a fifth of the time).
MAX_PRICED = 100_000


def spread(values: np.ndarray) -> Spread | None:
    """Mean, median, 5th/95th percentiles and extremes of a per-batch quantity (None when empty)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return None
    p5, median, p95 = (float(x) for x in np.percentile(v, (5, 50, 95)))
    return Spread(float(v.mean()), median, p5, p95, float(v.min()), float(v.max()))


def padded_tokens(walked: Walked) -> np.ndarray:
    """Tokens each batch holds once padded to its longest sample (empty without lengths)."""
    b = walked.batches
    return np.empty(0, np.int64) if b is None or b.len_max is None else b.n * b.len_max


def real_tokens(walked: Walked) -> np.ndarray:
    """Real (unpadded) tokens of each batch (empty without lengths)."""
    b = walked.batches
    return np.empty(0, np.int64) if b is None or b.tokens is None else b.tokens


def _fp(walked: Walked) -> np.ndarray:
    """Each batch's fingerprint as an unsigned 64-bit integer (the same batches, the same number)."""
    b = walked.batches
    return np.empty(0, np.uint64) if b is None else np.array([int(x, 16) for x in b.fp], dtype=np.uint64)


def efficiency(walked: Walked) -> tuple[float | None, np.ndarray]:
    """(real / padded tokens over every batch, each batch's own), from batches that hold a token."""
    real = real_tokens(walked).astype(np.float64)
    padded = padded_tokens(walked).astype(np.float64)
    ok = padded > 0
    if not ok.any():
        return None, np.empty(0)
    return float(real[ok].sum() / padded[ok].sum()), real[ok] / padded[ok]


def recurrence(walked: Walked) -> tuple[tuple[float, ...], float | None]:
    """Per epoch, the share of its batches (each rank's and micro-batch, by fingerprint) already
    drawn in an earlier epoch; and that share over every epoch after the first (None with one)."""
    fp, epoch = _fp(walked), walked.b_epoch
    if fp.size == 0:
        return (), None
    _, ids = np.unique(fp, return_inverse=True)
    first = np.full(int(ids.max()) + 1, np.iinfo(np.int64).max)
    np.minimum.at(first, ids, epoch)
    seen = first[ids] < epoch
    k = int(epoch.max()) + 1
    rows = np.bincount(epoch, minlength=k)
    hits = np.bincount(epoch, weights=seen.astype(np.float64), minlength=k)
    by_epoch = tuple(float(h / r) if r else 0.0 for h, r in zip(hits, rows, strict=True))
    later = epoch >= 1
    return by_epoch, (float(seen[later].mean()) if later.any() else None)


def chance(walked: Walked, samples: int, size: int) -> float | None:
    """The share of later epochs' batches a uniform reshuffle would repeat by chance: a batch of
    ``size`` of ``samples`` samples equals one of the K distinct batches drawn before its epoch with
    probability K / C(samples, size)."""
    fp, epoch = _fp(walked), walked.b_epoch
    if fp.size == 0 or epoch.max() < 1 or not 0 < size <= samples:
        return None
    log_c = math.lgamma(samples + 1) - math.lgamma(size + 1) - math.lgamma(samples - size + 1)
    shares, weights = [], []
    for e in range(1, int(epoch.max()) + 1):
        before = np.unique(fp[epoch < e]).size
        shares.append(min(1.0, math.exp(math.log(before) - log_c)) if before else 0.0)
        weights.append(int((epoch == e).sum()))
    return float(np.average(shares, weights=weights)) if sum(weights) else None


def modal_size(walked: Walked) -> int | None:
    """The most common batch size."""
    if walked.n.size == 0:
        return None
    values, counts = np.unique(walked.n, return_counts=True)
    return int(values[np.argmax(counts)])


def first_epoch(walked: Walked) -> np.ndarray:
    """Which of ``walked.idx`` the first epoch drew."""
    return np.repeat(walked.b_epoch == 0, walked.n)


def first_samples(walked: Walked) -> int:
    """Distinct samples the first epoch drew."""
    return int(np.unique(walked.idx[first_epoch(walked)]).size)


def first_lengths(walked: Walked) -> np.ndarray:
    """The length of every distinct sample the first epoch drew (once each)."""
    if walked.lengths is None:
        return np.empty(0, dtype=np.int64)
    first = first_epoch(walked)
    _, where = np.unique(walked.idx[first], return_index=True)
    return walked.lengths[first][where]


def budget(walked: Walked) -> int | None:
    """The token budget the fix is priced at: the largest padded batch, rounded up to 128 tokens."""
    padded = padded_tokens(walked)
    top = int(padded.max()) if padded.size else 0
    return int(math.ceil(top / BUDGET_ROUND) * BUDGET_ROUND) if top else None


def price(walked: Walked, own: float | None, lengths: np.ndarray) -> tuple[FixPrice | None, BucketPlan | None, str]:
    """(the fix priced on ``lengths``, the first epoch's samples', the bucket plan behind it, a note
    when it could not be priced): ``bucketing.plan.recommend`` at the budget this sampler's batches reached, as
    ``logdoctor buckets`` would recommend for these lengths."""
    from logdoctor.bucketing.plan import recommend

    lengths = lengths[lengths > 0]
    if lengths.size > MAX_PRICED:
        lengths = np.random.default_rng(0).choice(lengths, MAX_PRICED, replace=False)
    cap = budget(walked)
    if lengths.size < 2 or cap is None:
        return None, None, ""
    try:
        plan = recommend(lengths, cap, max_seq_len=min(cap, int(lengths.max())), shuffles=2, seed=0)
    except LogdoctorError as err:
        return None, None, f"the fix could not be priced: {err}"
    st = plan.strategies
    fix = FixPrice(
        buckets=len(plan.boundaries),
        boundaries=plan.boundaries,
        token_budget=plan.token_budget,
        sequences=plan.sequences,
        efficiency_random=st["random"].padding_efficiency,
        efficiency_sorted=st["sorted"].padding_efficiency,
        efficiency_bucketed=st["bucketed"].padding_efficiency,
        bucketed_vs_sorted=plan.relative_throughput("bucketed", "sorted"),
        bucketed_vs_random=plan.relative_throughput("bucketed", "random"),
        bucketed_vs_this=st["bucketed"].padding_efficiency / own if own else None,
    )
    return fix, plan, ""
