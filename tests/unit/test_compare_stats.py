"""The numbers of a comparison: matched loss with its bootstrap interval, tokens, throughput, power."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from logdoctor.comparison import quality, series
from logdoctor.comparison.series import RunSeries
from logdoctor.comparison.symptoms import power_at
from logdoctor.model import Report, Run, RunMeta, validate_run


def rs(steps: np.ndarray, loss: np.ndarray, tokens: np.ndarray | None = None) -> RunSeries:
    return RunSeries(steps.astype(float), loss, tokens, None, "", None)


def noisy(seed: int, n: int = 1000, offset: float = 0.0, ar: float = 0.5) -> np.ndarray:
    """A falling loss with AR(1) noise (training noise is correlated from step to step)."""
    rng = np.random.default_rng(seed)
    e = np.zeros(n)
    for i in range(1, n):
        e[i] = ar * e[i - 1] + rng.normal(0, 0.05)
    return 2 + 2 * np.exp(-np.arange(n) / 300) + offset + e


def test_same_run_twice_differs_within_noise() -> None:
    steps = np.arange(1, 1001)
    points, why = quality.compare_loss(rs(steps, noisy(1)), rs(steps, noisy(2)))
    assert why == ["tokens: not logged in the baseline"]
    assert [p.at for p in points] == [500, 1000]
    assert all(p.ci_low < 0 < p.ci_high and not p.worse for p in points)


def test_a_worse_candidate_is_worse_beyond_noise() -> None:
    steps = np.arange(1, 1001)
    points, _ = quality.compare_loss(rs(steps, noisy(1)), rs(steps, noisy(2, offset=0.1)))
    assert all(p.worse for p in points)
    assert points[-1].diff == pytest.approx(0.1, abs=0.03)
    assert points[-1].half_width < 0.05


def test_runs_that_do_not_overlap_are_not_comparable() -> None:
    a, b = rs(np.arange(1, 101), noisy(1, 100)), rs(np.arange(200, 300), noisy(2, 100))
    points, why = quality.compare_loss(a, b)
    assert points == []
    assert why[0] == "steps: the runs do not overlap"


def test_tokens_axis_matches_by_tokens_seen() -> None:
    steps = np.arange(1, 1001)
    # the candidate sees twice the tokens per step: at matched tokens it is at half the steps
    base = rs(steps, noisy(1), steps * 1000.0)
    cand = rs(steps[:500], noisy(2)[::2], steps[:500] * 2000.0)
    points, why = quality.compare_loss(base, cand)
    tok = [p for p in points if p.axis == "tokens"]
    assert why == [] and len(tok) == 2
    assert all(not p.worse for p in tok)
    assert any(p.worse or p.ci_high < 0 for p in points if p.axis == "steps")


def test_block_bootstrap_is_seeded() -> None:
    x = noisy(3, 200)
    a = quality.block_medians(x, np.random.default_rng(0))
    b = quality.block_medians(x, np.random.default_rng(0))
    assert np.array_equal(a, b) and a.size == quality.BOOTSTRAP


def test_reach_levels_are_reached_by_both_runs() -> None:
    steps = np.arange(1, 1001)
    out = quality.reach(rs(steps, noisy(1)), rs(steps, noisy(2, offset=0.05)))
    assert [s.name.split("_loss_")[0] for s in out] == ["steps_to", "steps_to"]
    assert all(s.baseline is not None and s.candidate is not None for s in out)
    assert out[-1].candidate > out[-1].baseline  # the worse run needs longer for the lowest level


def run_of(**cols: list[float]) -> Run:
    n = len(next(iter(cols.values())))
    table = pl.DataFrame({"step": list(range(1, n + 1)), "line_no": list(range(1, n + 1)), **cols})
    return Run(validate_run(table), RunMeta(path="x.log", format="jsonl"))


def test_throughput_field_wins() -> None:
    run = run_of(loss=[1.0] * 5, throughput=[10.0, 20, 30, 40, 50], tokens=[5.0] * 5)
    s = series.run_series(run)
    assert s.tok_s_source == "throughput field" and np.median(s.tok_s) == 30


def test_throughput_from_tokens_and_a_clock() -> None:
    run = run_of(loss=[1.0] * 4, tokens=[100.0, 200, 100, 300], elapsed=[1.0, 2.0, 2.5, 4.0])
    s = series.run_series(run)
    assert s.tok_s_source == "tokens / elapsed"
    assert s.tokens.tolist() == [100, 300, 400, 700]
    assert s.tok_s.tolist() == [200, 200, 200]  # the first row has no interval


def test_throughput_from_a_step_duration_in_ms() -> None:
    run = run_of(loss=[1.0] * 3, tokens=[1000.0, 2000, 500], dt_ms=[100.0, 200, 50])
    assert series.run_series(run).tok_s.tolist() == [10000, 10000, 10000]


def test_a_running_token_total_is_used_as_is() -> None:
    run = run_of(loss=[1.0] * 20, tokens=[4096.0 * (i + 1) for i in range(20)])
    assert series.run_series(run).tokens[-1] == 4096 * 20


def test_no_tokens_no_time_no_throughput() -> None:
    s = series.run_series(run_of(loss=[1.0, 2.0, 3.0]))
    assert (s.tokens, s.tok_s, s.pad_frac) == (None, None, None)


def _report_of(loss: np.ndarray) -> Report:
    from logdoctor import pipeline

    table = pl.DataFrame({"step": np.arange(1, loss.size + 1), "line_no": np.arange(1, loss.size + 1), "loss": loss})
    return pipeline.analyze(Run(validate_run(table), RunMeta(path="x.log", format="jsonl")))


def test_power_at_a_period_is_about_one_on_noise_and_large_on_a_cycle() -> None:
    rng = np.random.default_rng(5)
    n = np.arange(2000)
    base = 2 + 2 * np.exp(-n / 500)
    white = _report_of(base + rng.normal(0, 0.05, n.size))
    cycle = _report_of(base + rng.normal(0, 0.05, n.size) + 0.05 * np.sin(2 * np.pi * n / 100))
    assert 0.2 < power_at(white, 100.0) < 3.0
    assert power_at(cycle, 100.0) > 20
    assert power_at(white, 1500.0) is None  # fewer than 3 cycles
