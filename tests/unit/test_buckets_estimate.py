"""Estimating a bucket plan from the per-batch statistics a log printed."""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor.bucketing.estimate import lengths_from_batches
from logdoctor.bucketing.packing import pack
from logdoctor.buckets import estimate_from_batches, recommend
from logdoctor.errors import ConfigError


def test_sample_keeps_each_batch_count_mean_min_max() -> None:
    got = lengths_from_batches([5.0, 20.0, 7.0], [3, 2, 1], len_min=[2, 10, 7], len_max=[9, 30, 7])
    assert sorted(got.tolist()) == sorted([2, 9, 4, 10, 30, 7])
    assert lengths_from_batches([np.nan, 4.0], [3, 2]).tolist() == [4, 4]


def test_estimate_from_sorted_batches_matches_true_lengths() -> None:
    rng = np.random.default_rng(0)
    lengths = np.minimum(np.rint(rng.lognormal(5.0, 0.9, 30_000)).astype(np.int64) + 1, 4096)
    ordered = np.sort(lengths)
    p = pack(ordered, 4096)
    mean = np.add.reduceat(ordered, p.starts) / p.sizes
    est = estimate_from_batches(
        mean, p.sizes, len_min=ordered[p.starts], len_max=p.longest, token_budget=4096, buckets=6
    )
    true = recommend(lengths, 4096, buckets=6)
    assert est.sequences == lengths.size
    assert est.real_tokens == pytest.approx(lengths.sum(), rel=1e-3)
    for name in ("random", "sorted", "bucketed"):
        assert est.strategies[name].padding_efficiency == pytest.approx(
            true.strategies[name].padding_efficiency, abs=0.02
        )
    assert est.relative_throughput("bucketed", "sorted") == pytest.approx(
        true.relative_throughput("bucketed", "sorted"), abs=0.02
    )
    assert "6 buckets" in est.summary()


def test_default_budget_from_the_log_and_empty_input() -> None:
    est = estimate_from_batches([100.0] * 50, [40] * 50, len_max=[100] * 50)
    assert est.token_budget == 4000
    with pytest.raises(ConfigError):
        estimate_from_batches([np.nan], [3])


def test_bucketed_never_keeps_more_than_sorted_throughput() -> None:
    """Issue 16.10: a simulated bucketed shuffle a hair above sorted batching keeps 100%, not 101%."""
    from logdoctor.bucketing.plan import BucketPlan, StrategyResult

    strategies = {
        name: StrategyResult(name, eff, 10.0, 1000.0)
        for name, eff in (("random", 0.6), ("sorted", 0.95), ("bucketed", 0.96))
    }
    plan = BucketPlan(
        token_budget=4096,
        max_seq_len=512,
        sequences=100,
        real_tokens=9000,
        truncated=0,
        boundaries=(128, 512),
        objective_value=500,
        efficiency_by_k=(0.9, 0.95),
        strategies=strategies,
        buckets=(),
        shuffles=4,
        seed=0,
    )
    assert plan.relative_throughput("bucketed", "sorted") == 1.0
    assert "keeps 100% of sorted" in plan.summary()
    assert plan.relative_throughput("bucketed", "random") == pytest.approx(0.96 / 0.6)
