"""Optimal bucket boundaries against a brute-force search over every boundary set."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from logdoctor.bucketing.optimize import Histogram, optimal_boundaries, solve
from logdoctor.bucketing.plan import choose_k


def brute_force(lengths: np.ndarray, k: int) -> tuple[int, list[list[int]]]:
    """Minimal Σ(upper − len) over all K-sets of upper boundaries, and every set reaching it."""
    values = np.unique(lengths)
    best, argbest = None, []
    for cuts in itertools.combinations(values[:-1].tolist(), k - 1):
        uppers = [*cuts, int(values[-1])]
        idx = np.searchsorted(uppers, lengths, side="left")
        cost = int((np.asarray(uppers)[idx] - lengths).sum())
        if best is None or cost < best:
            best, argbest = cost, [uppers]
        elif cost == best:
            argbest.append(uppers)
    assert best is not None
    return best, argbest


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_boundaries_equal_brute_force(seed: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    lengths = np.rint(rng.lognormal(3.0, 0.8, size=60)).astype(np.int64) + 1
    if np.unique(lengths).size < k:
        pytest.skip("fewer distinct lengths than buckets")
    bounds, value = optimal_boundaries(lengths, k)
    best, argbest = brute_force(lengths, k)
    assert value == best
    assert bounds in argbest
    assert len(bounds) == k and bounds[-1] == int(lengths.max())


def test_k_is_capped_at_distinct_lengths() -> None:
    bounds, value = optimal_boundaries(np.array([5, 5, 9, 9, 9]), 4)
    assert bounds == [5, 9] and value == 0


def test_objective_decreases_with_k_to_zero() -> None:
    lengths = np.random.default_rng(3).integers(1, 40, size=500)
    objectives, _ = solve(Histogram.of(lengths), 64)
    assert all(a >= b for a, b in itertools.pairwise(objectives))
    assert objectives[-1] == 0 and len(objectives) == np.unique(lengths).size


@pytest.mark.parametrize("bound", [0.30, 0.15, 0.05])
def test_max_padding_gives_fewest_buckets(bound: float) -> None:
    lengths = np.rint(np.random.default_rng(7).lognormal(3.5, 0.9, 3000)).astype(np.int64) + 1
    real = int(lengths.sum())
    k, objectives, _ = choose_k(Histogram.of(lengths), real, None, bound)

    def pad(kk: int) -> float:
        value = optimal_boundaries(lengths, kk)[1]
        return value / (value + real)

    assert pad(k) <= bound
    assert k == 1 or pad(k - 1) > bound
    assert objectives[k - 1] == optimal_boundaries(lengths, k)[1]


@pytest.mark.parametrize("seed", range(8))
def test_dense_layers_equal_the_divide_and_conquer(seed: int) -> None:
    """Issue 33: everyday histograms take the dense layer; it must give the very same table and
    first argmins, ties included (few distinct values and repeated counts make many ties)."""
    from logdoctor.bucketing import optimize

    rng = np.random.default_rng(seed)
    spread = [3, 8, 60, 400][seed % 4]
    lengths = rng.choice(np.arange(1, spread + 1) * rng.integers(1, 4), size=int(rng.integers(5, 3000)))
    hist = Histogram.of(lengths.astype(np.int64))
    d = hist.values.size
    layer = hist.cost(np.zeros(d, dtype=np.int64), np.arange(d, dtype=np.int64))
    for k in range(2, min(d, 14) + 2):
        dense, split = optimize._layer_dense(hist, layer, k), optimize._layer_split(hist, layer, k)
        assert np.array_equal(dense[0], split[0]) and np.array_equal(dense[1], split[1]), (seed, k)
        # as solve() runs it: one above-diagonal mask for every layer
        shared = optimize._layer_dense(hist, layer, k, optimize._above_diagonal(d))
        assert np.array_equal(shared[0], split[0]) and np.array_equal(shared[1], split[1]), (seed, k)
        layer = split[0]


def test_solve_is_the_same_on_both_sides_of_the_dense_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.bucketing import optimize

    lengths = np.random.default_rng(3).integers(1, 300, size=5000).astype(np.int64)
    hist = Histogram.of(lengths)
    dense = solve(hist, 20)
    monkeypatch.setattr(optimize, "DENSE_MAX", 0)
    split = solve(hist, 20)
    assert dense[0] == split[0] and all(np.array_equal(a, b) for a, b in zip(dense[1], split[1], strict=True))
