"""The diagnosis lowers detector findings that its sorted verdict explains, and only those."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import codes, pipeline
from logdoctor.diagnosis.attribution import attribute
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.diagnosis.facts import gather
from logdoctor.model import Severity
from tests.reports import report_of

FIX = Path(__file__).resolve().parents[2] / "fixtures"


def test_symptoms_of_length_grouped_order_are_explained_not_alarmed() -> None:
    report = report_of(str(FIX / "example.log"))
    assert report.verdict.batching == "grouped"  # HF-style megabatches: sorted within windows
    explained = [f for f in report.findings if f.evidence.get("explained_by") == "grouped-batching"]
    assert explained, "the regime changes at the length resets should be attributed"
    for f in explained:
        assert f.severity is Severity.INFO and "Explained by the length-grouped megabatches" in f.message
        assert f.first_step is not None
        assert abs(int(f.evidence["explained_at_step"]) - f.first_step) <= 10  # type: ignore[arg-type]
    # the verdict itself stays a warning
    assert any(f.code == "LD505" and f.severity is Severity.WARNING for f in report.findings)


@pytest.mark.parametrize("name", ["bucketed.log", "instability.log", "static.log"])
def test_other_verdicts_leave_findings_alone(name: str) -> None:
    run = pipeline.load(str(FIX / "sim" / name))
    report = pipeline.analyze(run)
    assert report.verdict.batching != "sorted"
    by = {f.evidence["explained_by"] for f in report.findings if "explained_by" in f.evidence}
    assert by == set(), by


def test_a_cyclic_lr_that_restarts_each_epoch_explains_the_epoch_period_and_sawtooth() -> None:
    # the lr restarts at every epoch boundary and the loss follows it (LD506): the epoch-long period
    # (LD201) and the jump at each boundary (LD202) are the schedule's, so the headline must not say
    # "shuffle the data" under a verdict that batching is not the cause
    report = report_of(str(FIX / "sim" / "cyclic_lr.log"))
    assert report.verdict.batching == "not_batching" and "cyclic" in (report.verdict.cause or "")
    by = {f.code: f for f in report.findings}
    assert {"LD201", "LD202", "LD506"} <= set(by)
    for code in ("LD201", "LD202"):
        assert by[code].severity is Severity.INFO and by[code].evidence["explained_by"] == "cyclic-lr"
    assert "the lr's cycle (126 steps)" in by["LD201"].message
    assert report.status == "ok"


def test_a_period_off_the_lr_cycle_or_an_lr_cycle_off_the_epoch_is_not_explained() -> None:
    import dataclasses

    from logdoctor.diagnosis import batchfindings

    run = pipeline.load(str(FIX / "sim" / "cyclic_lr.log"))
    facts = gather(run, [])
    verdict = BatchingDiagnosis().diagnose(run, []).verdict
    cycle = next(c for c in facts.causes if c.key == "cyclic_lr").evidence["lr_cycle_steps"]
    assert cycle == 126
    found = [
        codes.finding("LD201", "period", evidence={"period": 0.7 * cycle}, severity=Severity.WARNING),
        codes.finding("LD201", "period", evidence={"period": 1.02 * cycle}, severity=Severity.WARNING),
    ]
    off, on = attribute(found, verdict, facts)
    assert off.severity is Severity.WARNING and on.severity is Severity.INFO
    assert batchfindings._lr_restarts_each_epoch(facts)
    assert facts.epochs is not None
    longer = dataclasses.replace(facts, epochs=dataclasses.replace(facts.epochs, steps_per_epoch=200))
    assert not batchfindings._lr_restarts_each_epoch(longer)


def test_a_change_far_from_any_reset_is_not_explained() -> None:
    run = pipeline.load(str(FIX / "example.log"))
    facts = gather(run, [])
    verdict = BatchingDiagnosis().diagnose(run, []).verdict
    near, far = facts.order.resets[0], facts.order.resets[0] + 30  # type: ignore[union-attr]
    found = [
        codes.finding("LD301", "jump", first_step=near, last_step=near, severity=Severity.WARNING),
        codes.finding("LD301", "jump", first_step=far, last_step=far, severity=Severity.WARNING),
    ]
    out = attribute(found, verdict, facts)
    assert out[0].severity is Severity.INFO and out[1].severity is Severity.WARNING


@pytest.mark.parametrize(
    ("values", "expected"),
    [([0, 0, 1, 1, 2, 2], 3.0), ([1, 1, 2, 2, 3], 3.0), ([0.01, 0.5, 1.0, 2.97], 2.97), ([], None)],
)
def test_epochs_seen_counts_zero_and_one_based_counters(values: list[float], expected: float | None) -> None:
    import numpy as np

    assert pipeline._epochs_seen(np.asarray(values, dtype=float)) == expected


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_reports_count_explained_findings_in_one_line_unless_verbose(fmt: str) -> None:
    from logdoctor.renderers import get_renderer

    report = report_of(str(FIX / "example.log"))
    n = sum(1 for f in report.findings if "explained_by" in f.evidence)
    plain = get_renderer(fmt)(color=False, width=100).render(report)
    assert f"+ {n} more" in plain and "Explained by the length-grouped megabatches" not in plain
    verbose = get_renderer(fmt)(color=False, width=100, verbosity=1).render(report)
    assert f"+ {n} more" not in verbose
    assert verbose.count("Explained") >= n  # the text renderer wraps the longer phrase


def test_jumps_right_after_a_resume_are_explained_by_it() -> None:
    run = pipeline.load(str(FIX / "example.log"))
    facts = gather(run, [])
    verdict = BatchingDiagnosis().diagnose(run, []).verdict
    found = [
        codes.finding("LD403", "rise", first_step=301, last_step=340, severity=Severity.WARNING),  # 1 row after
        codes.finding("LD301", "jump", first_step=330, last_step=330, severity=Severity.WARNING),  # far after
        codes.finding("LD004", "resume jump", first_step=300, last_step=300),  # the finding to act on
    ]
    out = attribute(found, verdict, facts, resume_steps=(300,))
    assert out[0].severity is Severity.INFO and out[0].evidence["explained_by"] == "resumed-run"
    assert "Explained by the resume: the run resumed at step 300" in out[0].message
    assert out[1].evidence.get("explained_by") != "resumed-run"  # 30 steps after: not the resume's
    assert out[2].severity is Severity.WARNING and "explained_by" not in out[2].evidence


@pytest.mark.reallogs
def test_marian_resume_jumps_read_as_one_finding_each(reallogs_dir: Path) -> None:
    report = report_of(str(reallogs_dir / "marian_encs_bt_multi_resume.log"))
    warnings = [f for f in report.findings if f.severity >= Severity.WARNING]
    # the validation cost rises after the last resume (Marian: "stalled 10 times"): LD410 beside LD004
    assert {f.code for f in warnings} == {"LD004", "LD410"}
    assert sum(f.evidence.get("explained_by") == "resumed-run" for f in report.findings) >= 4


def test_a_rise_inside_one_epoch_is_the_sorted_drift_but_one_across_resets_is_not() -> None:
    run = pipeline.load(str(FIX / "sim" / "sorted_asc.log"))
    facts = gather(run, [])
    verdict = BatchingDiagnosis().diagnose(run, []).verdict
    assert verdict.batching == "sorted"
    inside = codes.finding("LD403", "rise", first_step=238, last_step=299, severity=Severity.WARNING)
    across = codes.finding("LD403", "rise", first_step=150, last_step=380, severity=Severity.WARNING)
    out = attribute([inside, across], verdict, facts)
    assert out[0].severity is Severity.INFO and "drifts with batch length" in out[0].message
    assert out[1].severity is Severity.WARNING


def test_sorted_fixtures_read_as_one_error() -> None:
    for name in ("sorted_asc.log", "sorted_desc.log", "short_sorted.log"):
        report = pipeline.analyze(pipeline.load(str(FIX / "sim" / name)))
        loud = [f.code for f in report.findings if f.severity > Severity.INFO]
        assert loud == ["LD501"], (name, loud)
