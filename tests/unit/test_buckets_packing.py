"""The vectorised token-budget packing and the plan's efficiencies against a plain loop."""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor.bucketing.packing import pack
from logdoctor.bucketing.plan import recommend
from logdoctor.errors import ConfigError


def loop_batches(lengths: list[int], budget: int) -> list[list[int]]:
    """build_batches as people write it: add while (count + 1) × longest ≤ budget."""
    batches: list[list[int]] = []
    batch: list[int] = []
    for n in lengths:
        if batch and (len(batch) + 1) * max(*batch, n) > budget:
            batches.append(batch)
            batch = []
        batch.append(n)
    if batch:
        batches.append(batch)
    return batches


def padded(batches: list[list[int]]) -> int:
    return sum(len(b) * max(b) for b in batches)


@pytest.mark.parametrize("seed", range(8))
def test_pack_equals_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    budget = int(rng.integers(20, 600))
    lengths = rng.integers(1, budget + 1, size=int(rng.integers(1, 400)))
    p = pack(lengths, budget)
    ref = loop_batches(lengths.tolist(), budget)
    assert p.sizes.tolist() == [len(b) for b in ref]
    assert p.longest.tolist() == [max(b) for b in ref]
    assert p.padded_tokens == padded(ref)


@pytest.mark.parametrize("seed", range(6))
def test_pack_equals_loop_when_every_batch_holds_many(seed: int) -> None:
    """Lengths far below the budget: the search starts at budget // longest (issue 33), which the
    draws above (lengths up to the budget) leave at 1; with and without buckets."""
    rng = np.random.default_rng(100 + seed)
    budget = int(rng.integers(500, 5000))
    lengths = rng.integers(1, int(rng.integers(2, 60)), size=int(rng.integers(1, 3000)))
    p = pack(lengths, budget)
    ref = loop_batches(lengths.tolist(), budget)
    assert budget // int(lengths.max()) >= 8
    assert p.sizes.tolist() == [len(b) for b in ref] and p.longest.tolist() == [max(b) for b in ref]
    seg = np.sort(rng.integers(0, 4, size=lengths.size))
    ref = [b for s in np.unique(seg) for b in loop_batches(lengths[seg == s].tolist(), budget)]
    assert pack(lengths, budget, seg).sizes.tolist() == [len(b) for b in ref]


def test_pack_never_crosses_buckets() -> None:
    rng = np.random.default_rng(1)
    seg = np.sort(rng.integers(0, 5, size=300))
    lengths = rng.integers(1, 50, size=300)
    p = pack(lengths, 200, seg)
    ref = [b for s in np.unique(seg) for b in loop_batches(lengths[seg == s].tolist(), 200)]
    assert p.sizes.tolist() == [len(b) for b in ref]
    assert all(np.unique(seg[a : a + n]).size == 1 for a, n in zip(p.starts, p.sizes, strict=True))


def loop_bucketed(
    lengths: np.ndarray, bounds: tuple[int, ...], budget: int, rng: np.random.Generator
) -> tuple[int, int]:
    batches: list[list[int]] = []
    lower = 0
    for upper in bounds:
        members = lengths[(lengths > lower) & (lengths <= upper)].tolist()
        rng.shuffle(members)
        batches += loop_batches(members, budget)
        lower = upper
    return padded(batches), len(batches)


def test_reported_efficiencies_equal_direct_simulation() -> None:
    rng = np.random.default_rng(11)
    lengths = np.minimum(np.rint(rng.lognormal(5.0, 0.9, 20_000)).astype(np.int64) + 1, 2048)
    plan = recommend(lengths, 2048, buckets=4, shuffles=3, seed=5)
    real = int(lengths.sum())
    st = plan.strategies
    ref_sorted = loop_batches(sorted(lengths.tolist()), 2048)
    assert st["sorted"].padding_efficiency == pytest.approx(real / padded(ref_sorted), rel=1e-12)
    assert st["sorted"].batches_per_epoch == len(ref_sorted)
    sim = np.random.default_rng(99)  # independent shuffles: agreement within sampling noise
    rand = [padded(loop_batches(sim.permutation(lengths).tolist(), 2048)) for _ in range(3)]
    assert st["random"].padding_efficiency == pytest.approx(real / np.mean(rand), rel=0.01)
    buck = [loop_bucketed(lengths, plan.boundaries, 2048, sim) for _ in range(3)]
    assert st["bucketed"].padding_efficiency == pytest.approx(real / np.mean([b[0] for b in buck]), rel=0.01)
    mean_batches = np.mean([b[1] for b in buck])
    assert st["bucketed"].batches_per_epoch == pytest.approx(mean_batches, rel=0.01)
    # ordering that must hold for any data: sorted ≥ bucketed ≥ model bound, bucketed > random
    assert st["sorted"].padding_efficiency >= st["bucketed"].padding_efficiency
    assert st["bucketed"].padding_efficiency >= plan.model_efficiency
    assert st["bucketed"].padding_efficiency > st["random"].padding_efficiency


def test_bucket_mixing_stats_and_repeat_warning() -> None:
    rng = np.random.default_rng(2)
    lengths = np.concatenate([rng.integers(10, 60, size=5000), [1000, 1000, 1000]])
    plan = recommend(lengths, 1024, buckets=3, shuffles=2)
    assert sum(b.sequences for b in plan.buckets) == lengths.size
    assert sum(b.batches_per_epoch for b in plan.buckets) == pytest.approx(
        plan.strategies["bucketed"].batches_per_epoch
    )
    last = plan.buckets[-1]
    assert (last.lower, last.upper, last.sequences) == (plan.boundaries[-2], 1000, 3)
    assert last.batches_per_epoch == 3 and not last.repeats  # 1 sequence a batch: 3 batches
    tiny = recommend(np.concatenate([lengths[:5000], [300, 300]]), 1024, buckets=3)
    assert tiny.buckets[-1].repeats and any("recur" in w for w in tiny.warnings)
    assert all(b.log10_compositions > 100 for b in plan.buckets[:-1])


def test_truncation_is_counted_and_applied() -> None:
    plan = recommend(np.array([10, 20, 5000, 30]), 100, buckets=1, max_seq_len=50)
    assert plan.truncated == 1 and plan.real_tokens == 10 + 20 + 50 + 30
    assert plan.boundaries == (50,)


@pytest.mark.parametrize(
    "kwargs",
    [{"buckets": 2, "max_padding": 0.1}, {"buckets": 0}, {"max_padding": 1.5}, {"max_seq_len": 9999}, {"shuffles": 0}],
)
def test_bad_options_raise_config_error(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        recommend(np.array([1, 2, 3]), 100, **kwargs)  # type: ignore[arg-type]
