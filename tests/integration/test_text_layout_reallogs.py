"""Every public log at 80 columns: no line over 80 columns, no message printed twice, no empty table;
plain words first (p-values, z-scores and nulls only under -v and in JSON)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.model import Report
from tests.conftest import REALLOGS
from tests.reports import report_or_none
from tests.textlayout import layout_problems, render_text, statistics_in, statistics_kept

pytestmark = pytest.mark.reallogs
NAMES = sorted(p.name for p in REALLOGS.glob("*") if p.name not in ("MANIFEST.tsv", "README.md")) or ["none"]


def _report(path: str) -> Report | None:
    return report_or_none(path)  # None: not a run (test_no_traceback covers the error itself)


@pytest.mark.parametrize("verbosity", [0, 1])
@pytest.mark.parametrize("name", NAMES)
def test_text_report_fits_80_columns(reallogs_dir: Path, name: str, verbosity: int) -> None:
    report = _report(str(reallogs_dir / name))
    if report is None:
        pytest.skip(f"{name} is not a run logdoctor reads")
    text = render_text(report, verbosity)
    assert layout_problems(text, report) == []
    if verbosity == 0:  # plain words first: statistics only under -v and in JSON
        assert statistics_in(text) == []
        assert statistics_kept(report) == []
