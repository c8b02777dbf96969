"""Step-time series (from durations, rates or clocks) and the slowdown detector (LD701)."""

from __future__ import annotations

import numpy as np

from logdoctor.detectors import steptimes
from logdoctor.detectors.slowdown import SlowdownDetector
from tests.unit.synth import healthy, make_run


def _times(n: int = 1000, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 0.25 * np.exp(rng.standard_t(3, n) * 0.03)


def test_isolated_eval_and_checkpoint_steps_are_not_a_slowdown() -> None:
    t = _times()
    t[::50] *= 8.0  # an evaluation every 50 steps
    t[500] *= 40.0  # a checkpoint save
    t[0] *= 100.0  # compilation
    assert SlowdownDetector().analyze(make_run(healthy(1000, 0), step_time=t)).findings == ()


def test_a_slowed_stretch_is_found_with_its_range_and_factor() -> None:
    t = _times()
    t[400:520] *= 2.0
    (f,) = SlowdownDetector().analyze(make_run(healthy(1000, 0), step_time=t)).findings
    assert f.code == "LD701" and f.severity.label == "warning"
    assert abs(int(f.first_step or 0) - 401) <= 3 and abs(int(f.last_step or 0) - 520) <= 3
    assert 1.8 < float(str(f.evidence["factor"])) < 2.2 and f.evidence["source"] == "step_time"


def test_throughput_drop_and_a_cumulative_clock_are_read_as_step_time() -> None:
    t = _times()
    t[600:700] *= 3.0
    tput = 4096 / t
    (f,) = SlowdownDetector().analyze(make_run(healthy(1000, 0), throughput=tput)).findings
    assert f.evidence["kind"] == "rate" and float(str(f.evidence["factor"])) > 2.5
    clock = np.cumsum(t)
    (g,) = SlowdownDetector().analyze(make_run(healthy(1000, 0), elapsed=clock)).findings
    assert g.evidence["kind"] == "elapsed" and abs(int(g.first_step or 0) - 601) <= 3


def test_no_timing_column_no_series_and_ratios_between_runs() -> None:
    assert steptimes.step_times(make_run(healthy(100, 0))) is None
    a = steptimes.step_times(make_run(healthy(100, 0), step_time=np.full(100, 0.2) + np.arange(100) * 1e-6))
    b = steptimes.step_times(make_run(healthy(100, 0), step_time=np.full(100, 0.3) + np.arange(100) * 1e-6))
    assert a is not None and b is not None
    ratio = steptimes.median_ratio(a, b)
    assert ratio is not None and abs(ratio - 1.5) < 0.01


def test_unix_timestamps_give_the_step_time() -> None:
    t = _times(600)
    t[300:380] *= 2.5
    stamps = 1.7e9 + np.cumsum(t)
    (f,) = SlowdownDetector().analyze(make_run(healthy(600, 0), timestamp=stamps)).findings
    assert f.evidence["source"] == "timestamp" and abs(int(f.first_step or 0) - 301) <= 3
