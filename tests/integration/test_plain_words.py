"""Plain words first (issue 32): the default text report of every fixture log shows no p-value,
z or t score, robust SD or null; ``-v`` and the JSON report still carry every one of them."""

from __future__ import annotations

import json

import pytest

from logdoctor.model import Report
from tests.conftest import FIXTURES
from tests.reports import report_or_none
from tests.textlayout import render_text, statistics_in, statistics_kept


def _fixture_logs() -> list[str]:
    skip = (".py", ".truth.json", ".gz", ".yaml")
    files = [
        p
        for p in FIXTURES.rglob("*")
        if p.is_file()
        and not p.name.endswith(skip)
        and "__pycache__" not in p.parts
        and not any(q.name.endswith("_run") for q in p.parents)
    ]
    return sorted(str(p.relative_to(FIXTURES)) for p in files)


def _report(name: str) -> Report | None:
    return report_or_none(FIXTURES / name)  # None: not a run (test_no_traceback covers the error itself)


@pytest.mark.parametrize("name", _fixture_logs())
def test_default_text_speaks_plainly_and_v_and_json_keep_the_statistics(name: str) -> None:
    report = _report(name)
    if report is None:
        pytest.skip(f"{name} is not a run logdoctor reads")
    assert statistics_in(render_text(report)) == []
    assert statistics_kept(report) == []


#: Fixtures whose default report printed p-values or z-scores in messages and verdict evidence
#: before issue 32, with a statistic each must still show under -v (flattened text).
UNDER_V = {
    "example.log": "loss vs batch length: Spearman ρ = 0.95 (95% CI 0.95 to 0.96), p < 1e-9",
    "fp16/late_overflows.log": "p value: p < 1e-9",
    "realruns/hf_gbl_m10_stats.log": "window p: p < 1e-9",
    "realruns/loop_fixed_loss.log": "fixed order z: 8.65",
    "sim/cyclic_lr.log": "loss jump at each epoch boundary: 0.628 (z = 31.2)",
}


@pytest.mark.parametrize("name", sorted(UNDER_V))
def test_statistics_move_to_v(name: str) -> None:
    report = _report(name)
    assert report is not None
    assert statistics_in(render_text(report)) == []
    verbose = " ".join(render_text(report, 1).split())
    assert UNDER_V[name] in verbose
    assert statistics_in(verbose)


def test_json_keeps_the_statistics() -> None:
    from logdoctor.renderers import get_renderer

    report = _report("fp16/late_overflows.log")
    assert report is not None
    doc = json.loads(str(get_renderer("json")().render(report)))
    late = next(f for f in doc["findings"] if f["code"] == "LD024")
    assert late["evidence"]["p_value"] < 1e-40 and "p=" not in late["message"]
