"""Recommend length buckets for a dataset and price them against random and sorted batching."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from logdoctor.bucketing import optimize, packing
from logdoctor.errors import ConfigError

STRATEGIES = ("random", "sorted", "bucketed")
MAX_BUCKETS = 64
#: A bucket that fills this many batches or fewer per epoch gives (nearly) the same batches
#: every epoch: static composition by another name.
REPEAT_BATCHES = 2.0


@dataclass(frozen=True, slots=True)
class StrategyResult:
    """One batching strategy over one epoch (means over the simulated shuffles)."""

    name: str
    padding_efficiency: float  # real tokens / padded tokens processed
    batches_per_epoch: float
    padded_tokens: float

    @property
    def tokens_per_real_token(self) -> float:
        """Tokens processed (padding included) per real token: 1 / efficiency."""
        return 1.0 / self.padding_efficiency


@dataclass(frozen=True, slots=True)
class BucketStats:
    """How much one bucket still mixes: what a batch drawn from it can be."""

    lower: int  # exclusive
    upper: int  # inclusive
    sequences: int
    tokens: int
    batches_per_epoch: float
    seqs_per_batch: float
    log10_compositions: float  # log10 of the ways to split the bucket into its batches

    @property
    def repeats(self) -> bool:
        """True when the bucket fills so few batches that they recur epoch after epoch."""
        return self.batches_per_epoch <= REPEAT_BATCHES


@dataclass(frozen=True, slots=True)
class BucketPlan:
    """The recommendation and its price, the single record every output renders."""

    token_budget: int
    max_seq_len: int
    sequences: int
    real_tokens: int
    truncated: int
    boundaries: tuple[int, ...]
    objective_value: int
    efficiency_by_k: tuple[float, ...]  # model efficiency for K = 1, 2, ...
    strategies: dict[str, StrategyResult]
    buckets: tuple[BucketStats, ...]
    shuffles: int
    seed: int
    objective: str = optimize.OBJECTIVE

    @property
    def model_efficiency(self) -> float:
        """Efficiency if every sequence were padded to its bucket's upper boundary."""
        return self.real_tokens / (self.real_tokens + self.objective_value)

    def relative_throughput(self, strategy: str, to: str) -> float:
        """Real-token throughput of ``strategy`` relative to ``to`` when compute is proportional
        to padded tokens processed (the ratio of padding efficiencies). Against ``sorted``, the
        padding optimum, it is capped at 1: greedy packing noise can put a simulated bucketed
        shuffle a hair above it, and "keeps 101% of sorted throughput" is not a price."""
        ratio = self.strategies[strategy].padding_efficiency / self.strategies[to].padding_efficiency
        return min(ratio, 1.0) if to == "sorted" else ratio

    @property
    def warnings(self) -> tuple[str, ...]:
        """Buckets too small to mix, and truncated sequences."""
        out = [
            f"bucket ({b.lower}, {b.upper}] fills only {b.batches_per_epoch:.1f} batch(es) per "
            "epoch: "
            "its batches recur every epoch (static composition by another name); merge it"
            for b in self.buckets
            if b.repeats
        ]
        if self.truncated:
            out.append(f"{self.truncated} sequences longer than {self.max_seq_len} were truncated")
        return tuple(out)

    def summary(self) -> str:
        """One sentence, for hints: the bucketed shuffle's price against sorted batching."""
        return (
            f"a bucketed shuffle with {len(self.boundaries)} buckets keeps "
            f"{self.relative_throughput('bucketed', 'sorted'):.0%} of sorted-batching throughput "
            f"({self.relative_throughput('bucketed', 'random'):.2f}x a random shuffle)"
        )


def choose_k(
    hist: optimize.Histogram,
    real: int,
    buckets: int | None,
    max_padding: float | None,
) -> tuple[int, list[int], list[NDArray[np.int64]]]:
    """Solve the DP and pick K: the one asked for, or the fewest meeting ``max_padding``."""
    if buckets is not None and max_padding is not None:
        raise ConfigError("give --buckets or --max-padding, not both")
    if buckets is not None:
        if not 1 <= buckets <= MAX_BUCKETS:
            raise ConfigError(f"--buckets must be in 1..{MAX_BUCKETS}, got {buckets}")
        objectives, args = optimize.solve(hist, max(buckets, 12))
        return min(buckets, len(objectives)), objectives, args
    bound = 0.10 if max_padding is None else max_padding
    if not 0.0 <= bound < 1.0:
        raise ConfigError(f"--max-padding must be in [0, 1), got {bound}")
    objectives, args = optimize.solve(hist, MAX_BUCKETS, lambda v: v <= bound * (v + real), 8)
    for k, value in enumerate(objectives, start=1):
        if value <= bound * (value + real):
            return k, objectives, args
    best = objectives[-1] / (objectives[-1] + real)
    raise ConfigError(f"--max-padding {bound}: not reachable with {len(objectives)} buckets (best {best:.3f})")


def _simulate(
    lengths: NDArray[np.int64], budget: int, boundaries: NDArray[np.int64], shuffles: int, seed: int
) -> tuple[dict[str, StrategyResult], NDArray[np.float64], NDArray[np.float64]]:
    """Pack one epoch per strategy; mean batches and Σ log10(size!) per bucket for (c)."""
    rng = np.random.default_rng(seed)
    real = float(lengths.sum())
    results = {"sorted": [packing.pack(np.sort(lengths), budget)]}
    results["random"] = [
        packing.pack(lengths[packing.shuffled_order(lengths.size, rng)], budget) for _ in range(shuffles)
    ]
    bucket = packing.bucket_of(lengths, boundaries)
    per_bucket = np.zeros(boundaries.size)
    log_fact = np.zeros(boundaries.size)
    results["bucketed"] = []
    for _ in range(shuffles):
        order = packing.bucketed_order(bucket, rng)
        p = packing.pack(lengths[order], budget, bucket[order])
        b_of_batch = bucket[order][p.starts]
        per_bucket += np.bincount(b_of_batch, minlength=boundaries.size)
        lf = _log_factorial(int(p.sizes.max(initial=0)))[p.sizes] / math.log(10)
        log_fact += np.bincount(b_of_batch, weights=lf, minlength=boundaries.size)
        results["bucketed"].append(p)
    out = {}
    for name in STRATEGIES:
        padded = float(np.mean([p.padded_tokens for p in results[name]]))
        out[name] = StrategyResult(name, real / padded, float(np.mean([p.batches for p in results[name]])), padded)
    return out, per_bucket / shuffles, log_fact / shuffles


def recommend(
    lengths: NDArray[np.int64],
    token_budget: int,
    *,
    buckets: int | None = None,
    max_padding: float | None = None,
    max_seq_len: int | None = None,
    shuffles: int = 3,
    seed: int = 0,
) -> BucketPlan:
    """Optimal length buckets for token-budget batching of ``lengths``, priced by simulation.

    Args:
        lengths: sequence lengths (positive integers), one per sample.
        token_budget: the most padded tokens one batch holds (count × longest ≤ budget).
        buckets: number of buckets K; or else ``max_padding``: the fewest buckets whose
            modelled padding fraction is at most this (default 0.10).
        max_seq_len: longer sequences are truncated to it (default and cap: token_budget).
        shuffles: epochs simulated (and averaged) for the random and bucketed strategies.
        seed: seed of the simulated shuffles.

    Raises:
        ConfigError: bad budget, K, bound or max_seq_len.
    """
    if token_budget < 1 or shuffles < 1:
        raise ConfigError(f"token budget and shuffles must be ≥ 1, got {token_budget}, {shuffles}")
    cap = token_budget if max_seq_len is None else max_seq_len
    if not 1 <= cap <= token_budget:
        raise ConfigError(f"--max-seq-len must be in 1..{token_budget} (the budget), got {cap}")
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size == 0:
        raise ConfigError("no lengths to bucket")
    clipped = packing.clip_lengths(lengths, cap)
    real = int(clipped.sum())
    hist = optimize.Histogram.of(clipped)
    k, objectives, args = choose_k(hist, real, buckets, max_padding)
    bounds = np.asarray(optimize.boundaries_for(hist, args, k), dtype=np.int64)
    strategies, per_bucket, log_fact = _simulate(clipped, token_budget, bounds, shuffles, seed)
    return BucketPlan(
        token_budget=token_budget,
        max_seq_len=cap,
        sequences=int(lengths.size),
        real_tokens=real,
        truncated=int((lengths > cap).sum()),
        boundaries=tuple(int(b) for b in bounds),
        objective_value=objectives[k - 1],
        efficiency_by_k=tuple(real / (real + v) for v in objectives),
        strategies=strategies,
        buckets=_bucket_stats(clipped, bounds, per_bucket, log_fact),
        shuffles=shuffles,
        seed=seed,
    )


def _bucket_stats(
    lengths: NDArray[np.int64],
    bounds: NDArray[np.int64],
    per_bucket: NDArray[np.float64],
    log_fact: NDArray[np.float64],
) -> tuple[BucketStats, ...]:
    bucket = packing.bucket_of(lengths, bounds)
    seqs = np.bincount(bucket, minlength=bounds.size)
    toks = np.bincount(bucket, weights=lengths, minlength=bounds.size)
    out = []
    for b in range(bounds.size):
        n, nb = int(seqs[b]), float(per_bucket[b])
        # multinomial n! / Π size_i! / (batches)! : the distinct ways to cut the bucket into batches
        comps = (math.lgamma(n + 1) - math.lgamma(nb + 1)) / math.log(10) - float(log_fact[b])
        out.append(
            BucketStats(
                lower=int(bounds[b - 1]) if b else 0,
                upper=int(bounds[b]),
                sequences=n,
                tokens=int(toks[b]),
                batches_per_epoch=nb,
                seqs_per_batch=n / nb if nb else 0.0,
                log10_compositions=max(0.0, comps),
            )
        )
    return tuple(out)


def _log_factorial(n: int) -> NDArray[np.float64]:
    """log(k!) for k = 0..n (a cumulative sum of logs: scipy.special.gammaln(k + 1) without scipy)."""
    return np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))))
