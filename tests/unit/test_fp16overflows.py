"""fp16 overflow lines: parsed as skipped steps (ingest), calibration (LD023) vs after it (LD024), LD020's split."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

from logdoctor import pipeline
from logdoctor.detectors.fp16overflows import late_null
from logdoctor.detectors.mixedprecision import MixedPrecisionDetector
from logdoctor.ingest.parsers.overflows import scan_overflows, track_scalers
from logdoctor.model import Report
from logdoctor.stats.distributions import poisson_sf
from tests.unit.synth import healthy, make_run

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fp16"
DS = "[2023-04-18 08:48:05,282] [INFO] [loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "


def test_overflow_lines_of_each_framework_are_read_with_their_scales() -> None:
    lines = [
        DS + "Attempted loss scale: 65536, reducing to 32768",
        DS + "Attempted loss scale: 65536, but hysteresis is 2. Reducing hysteresis to 1",
        "[deepspeed] fp16 dynamic loss scale overflow! Skipping step. "
        "Attempted loss scale: 4294967296, reducing to 2147483648",
        "[fairseq.trainer][INFO] - NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 64.0",
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
        "No Grad overflow for 500 iterations",  # DeepSpeed's growth note: not a skip
        "overflow_count: 0 loss 2.3",
    ]
    frame = pl.DataFrame({"line_no": list(range(1, len(lines) + 1)), "line": lines})
    got = scan_overflows(frame)
    assert got["line_no"].to_list() == [1, 2, 3, 4, 5]
    assert got["tried"].to_list() == [65536.0, 65536.0, 4294967296.0, 128.0, 65536.0]
    assert got["cut"].to_list() == [32768.0, 65536.0, 2147483648.0, 64.0, 32768.0]


def test_scalers_tracked_as_in_the_deepspeed_chat_log() -> None:
    # the real log's 14 overflows (two scalers: actor and critic), row = the step each belongs to
    tried = np.array([65536, 65536, 65536, 65536, 32768, 32768, 16384, 8192, 16384, 4096, 8192, 2048, 8192, 8192.0])
    cut = np.array([65536, 65536, 32768, 32768, 16384, 16384, 8192, 4096, 8192, 2048, 4096, 1024, 8192, 4096.0])
    row = np.array([0, 0, 1, 1, 2, 2, 5, 10, 22, 57, 91, 96, 211, 212])
    regrown, n = track_scalers(tried, cut, row)
    assert n == 2
    assert np.flatnonzero(regrown).tolist() == [12]  # only the overflow at 8192 after both sat lower


def test_poisson_tail_matches_scipy() -> None:
    for k, lam in [(0, 3.0), (1, 0.5), (3, 7.6), (20, 9.9), (80, 500.0), (5, 0.0)]:
        assert poisson_sf(k, lam) == pytest.approx(stats.poisson.sf(k - 1, lam), abs=1e-12)


def test_null_is_one_overflow_per_window_per_scaler() -> None:
    assert late_null(2, 380.0, 2)[0] is False  # the real DeepSpeed-Chat run: 2 late, 7.6 expected
    assert late_null(77, 494.0, 2)[0] is True
    assert late_null(2, 10_000.0, 1, window=1e9)[0] is False  # never a warning for a handful (min_late 3)


def _report(name: str) -> tuple[Report, dict[str, object]]:
    truth = json.loads((FIXTURES / f"{name}.truth.json").read_text())
    return pipeline.analyze(pipeline.load(str(FIXTURES / f"{name}.log"))), truth


@pytest.mark.parametrize("name", ["calibration_only", "probing", "late_overflows"])
def test_fixture_overflows_split_as_the_simulation_counted(name: str) -> None:
    rep, truth = _report(name)
    cal = [f for f in rep.findings if f.code == "LD023"]
    late = [f for f in rep.findings if f.code == "LD024"]
    assert len(cal) == 1 and cal[0].severity.label == truth["LD023"]
    assert cal[0].evidence["skipped_in_calibration"] == truth["calibration_skips"]
    assert cal[0].evidence["scalers"] == truth["scalers"]
    if truth["LD024"] is None:
        assert not late
    else:
        assert len(late) == 1 and late[0].severity.label == truth["LD024"]
        assert late[0].evidence["skipped_after_calibration"] == truth["late_skips"]


def test_calibration_overflows_alone_never_warn() -> None:
    rep, _ = _report("calibration_only")
    assert not [f for f in rep.findings if f.code.startswith("LD02") and f.severity.label != "info"]
    assert "normal for dynamic loss scaling" in next(f.message for f in rep.findings if f.code == "LD023")


def test_megatron_counter_in_calibration_is_information() -> None:
    n = 50
    skipped = np.zeros(n)
    skipped[[0, 1]] = [8, 1]
    scale = np.r_[np.full(2, 32768.0), np.full(n - 2, 16384.0)]
    run = make_run(healthy(n, 1), number_of_skipped_iterations=skipped, loss_scale=scale)
    (found,) = MixedPrecisionDetector().analyze(run).findings
    assert found.severity.label == "info" and "calibrated down" in found.message
    assert found.evidence["skipped_after_calibration"] == 0


def test_megatron_counter_after_the_scale_settled_warns_beyond_the_null() -> None:
    n = 400
    rng = np.random.default_rng(3)
    skipped = np.zeros(n)
    skipped[0] = 8
    late = rng.choice(np.arange(120, n), 40, replace=False)
    skipped[late] = 1  # 40 skips over 300 settled steps: the null expects 3
    scale = np.r_[np.full(100, 16384.0), np.full(n - 100, 32768.0)]  # grew back at row 100
    run = make_run(healthy(n, 1), number_of_skipped_iterations=skipped, loss_scale=scale)
    (found,) = MixedPrecisionDetector().analyze(run).findings
    assert found.severity.label == "warning"
    assert found.evidence["skipped_after_calibration"] == 40


APEX = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {}\n"


def _apex_log(tmp_path: Path, overflows_before: dict[int, list[float]]) -> Report:
    """A metric line every 100 iterations (AverageMeter style); ``overflows_before[i]``: the apex
    overflow lines printed just before row i."""
    p = tmp_path / "train.log"
    lines = []
    for i in range(40):
        lines += [APEX.format(c) for c in overflows_before.get(i, [])]
        lines.append(f"step {100 * i} loss {2.0 * np.exp(-i / 15) + 0.5:.4f}\n")
    p.write_text("".join(lines))
    return pipeline.analyze(pipeline.load(str(p)))


def test_overflows_thousands_of_steps_in_are_not_calibration(tmp_path: Path) -> None:
    # the scale grew back from its initial value over clean steps and then overflowed: probing (LD024), at info
    rep = _apex_log(tmp_path, {30: [131072.0], 34: [65536.0]})
    codes_ = {f.code: f for f in rep.findings if f.code.startswith("LD02")}
    assert "LD023" not in codes_ and codes_["LD024"].severity.label == "info"
    assert codes_["LD024"].evidence["skipped_after_calibration"] == 2


def test_overflows_at_the_first_rows_stay_calibration(tmp_path: Path) -> None:
    # must not: the scale halving at the run's first steps (written before rows 0 and 1) is calibration
    rep = _apex_log(tmp_path, {0: [32768.0, 16384.0], 1: [8192.0]})
    codes_ = {f.code for f in rep.findings if f.code.startswith("LD02")}
    assert codes_ == {"LD023"}
