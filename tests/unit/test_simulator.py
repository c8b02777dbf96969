"""The pipeline simulator: token-budget packing, strategies' defining properties, seeded truth."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fixtures.simpipeline import STRATEGIES, batch_orders, pack
from fixtures.simulator import SimConfig, as_run, sample_lengths, simulate


def test_pack_respects_the_token_budget_and_keeps_every_sample() -> None:
    rng = np.random.default_rng(0)
    lengths = sample_lengths(rng, 2000, 1024)
    batches = pack(rng.permutation(lengths.size), lengths, 8192)
    assert all(b.size * lengths[b].max() <= 8192 for b in batches)
    assert np.array_equal(np.sort(np.concatenate(batches)), np.arange(lengths.size))
    # greedy: adding the next sample would have broken the budget
    nxt = [np.r_[a, b[:1]] for a, b in itertools.pairwise(batches)]
    assert all(n.size * lengths[n].max() > 8192 for n in nxt)


def test_lengths_are_heavy_tailed_and_clipped() -> None:
    lengths = sample_lengths(np.random.default_rng(1), 20000, 1024)
    assert lengths.min() >= 8 and lengths.max() == 1024
    assert np.mean(lengths) > np.median(lengths) * 1.2


def _compositions(strategy: str) -> list[set[bytes]]:
    rng = np.random.default_rng(3)
    lengths = sample_lengths(rng, 1500, 1024)
    batches, epoch = batch_orders(strategy, lengths, 8192, 3, rng)
    return [{np.sort(b).tobytes() for b, e in zip(batches, epoch, strict=True) if e == k} for k in range(3)]


def test_static_recurs_and_bucketed_recomposes() -> None:
    static, bucketed = _compositions("static"), _compositions("bucketed")
    assert static[0] == static[1] == static[2]
    singletons_or_tiny = len(bucketed[0] & bucketed[1]) / len(bucketed[1])
    assert singletons_or_tiny < 0.05


def test_sorted_order_is_monotone_within_epochs() -> None:
    rng = np.random.default_rng(4)
    lengths = sample_lengths(rng, 1500, 1024)
    batches, epoch = batch_orders("sorted_asc", lengths, 8192, 2, rng)
    means = np.array([lengths[b].mean() for b in batches])[epoch == 0]
    assert np.all(np.diff(means) >= 0)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_simulate_is_seeded_and_returns_its_truth(strategy: str) -> None:
    cfg = SimConfig(strategy=strategy, n_samples=1500, epochs=3, seed=5)
    t1, truth = simulate(cfg)
    t2, _ = simulate(cfg)
    assert t1.equals(t2)
    assert truth["strategy"] == strategy and truth["seed"] == 5
    assert truth["steps"] == t1.height and len(truth["epoch_starts"]) == 3  # type: ignore[arg-type]


def test_resume_rewrites_steps_and_as_run_keeps_the_last_write() -> None:
    table, truth = simulate(SimConfig(confounder="resume", n_samples=1500, seed=6))
    run = as_run(table)
    assert run.meta.resumes == 1 and run.meta.resume_steps == (truth["resume_from"],)
    assert run.n_steps == truth["steps"]


def test_running_average_resets_each_epoch() -> None:
    table, _ = simulate(SimConfig(confounder="running_avg", n_samples=1500, seed=7))
    loss = table["loss"].to_numpy()
    start = np.flatnonzero(np.diff(table["epoch"].to_numpy())) + 1
    late = np.abs(np.diff(loss[start[0] - 40 : start[0]])).mean()
    early = np.abs(np.diff(loss[start[0] : start[0] + 5])).mean()
    assert early > 5 * late
