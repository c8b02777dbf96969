"""Updates that never happened: skip counters read even on lines with no loss (LD020), whatever their source."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.detectors.fp16overflows import MIN_NEVER_UPDATED
from logdoctor.model import Finding, Severity

_DS = "[2023-04-18 08:48:36,035] [INFO] [logging.py:96:log_dist] [Rank 0] step={k}, skipped={s}, lr=[5.8e-07]"


def _ld020(tmp_path: Path, skipped_at: dict[int, int] | None, last: int = 400, engines: int = 1) -> list[Finding]:
    """A DeepSpeed log: a loss line every 10 steps, an engine line (per engine) every 10 steps whose
    running total of skipped steps is ``skipped_at(k)``."""
    lines = []
    for k in range(10, last + 1, 10):
        lines.append(f"step {k} | loss {3 - k / (2 * last):.4f}")
        s = skipped_at.get(k, max((v for j, v in skipped_at.items() if j <= k), default=0)) if skipped_at else 0
        lines += [_DS.format(k=k, s=s)] * engines
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    report = pipeline.analyze(pipeline.load(str(path)))
    return [f for f in report.findings if f.code in ("LD020", "LD023", "LD024")]


def test_every_step_skipped_is_an_error(tmp_path: Path) -> None:
    found = _ld020(tmp_path, {k: k for k in range(10, 401, 10)})
    assert len(found) == 1 and found[0].code == "LD020" and found[0].severity is Severity.ERROR
    assert "never updated" in found[0].message and found[0].evidence["steps_counted"] == 400


def test_every_step_skipped_by_each_of_two_engines_is_an_error(tmp_path: Path) -> None:
    found = _ld020(tmp_path, {k: k for k in range(10, 401, 10)}, engines=2)
    assert [(f.code, f.severity) for f in found] == [("LD020", Severity.ERROR)]


def test_a_short_run_all_skipped_may_still_be_calibrating(tmp_path: Path) -> None:
    last = (MIN_NEVER_UPDATED // 10) * 10  # no more than a calibration from 2^32 skips in a row, and twice that
    found = _ld020(tmp_path, {k: k for k in range(10, last + 1, 10)}, last=last)
    assert all(f.severity is not Severity.ERROR for f in found)


def test_skips_in_the_warm_up_only_are_info(tmp_path: Path) -> None:
    found = _ld020(tmp_path, {10: 6, 20: 9})
    assert [(f.code, f.severity) for f in found] == [("LD020", Severity.INFO)]


def test_many_skips_after_the_warm_up_are_a_warning(tmp_path: Path) -> None:
    totals = {10: 6, 20: 6, **{k: 6 + (k - 20) // 2 for k in range(30, 401, 10)}}
    found = _ld020(tmp_path, totals)
    assert [(f.code, f.severity) for f in found] == [("LD020", Severity.WARNING)]


def test_no_skip_counted_is_silent(tmp_path: Path) -> None:
    assert _ld020(tmp_path, None) == []


@pytest.mark.parametrize("every_step", [True, False])
def test_overflow_lines_at_every_step_are_the_same_error(tmp_path: Path, every_step: bool) -> None:
    lines, scale = [], 65536.0
    for k in range(1, 201):
        if every_step or k <= 5:
            cut = f"Attempted loss scale: {scale:g}, reducing to {scale / 2:g}"
            lines.append(f"[deepspeed] OVERFLOW! Rank 0 Skipping step. {cut}")
            scale = max(1.0, scale / 2)
        lines.append(f"step {k} | loss {3 - k / 400:.4f}")
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    found = [f for f in pipeline.analyze(pipeline.load(str(path))).findings if f.code in ("LD020", "LD023", "LD024")]
    if every_step:
        assert [(f.code, f.severity) for f in found] == [("LD020", Severity.ERROR)]
    else:
        assert [(f.code, f.severity) for f in found] == [("LD023", Severity.INFO)]
