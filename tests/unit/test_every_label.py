"""No renderer can miss a case: every verdict kind, every severity and every status through every
format, for one input and for many (the many-runs summary once crashed on ``grouped``)."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import pytest

from logdoctor import codes
from logdoctor.errors import ConfigError
from logdoctor.model import BATCHING_LABELS, Finding, Outcome, Report, Severity, Verdict
from logdoctor.renderers import RENDERERS, get_renderer
from logdoctor.renderers.labels import STATUS_LABELS, verdict_words
from tests.reportfactory import sorted_report

#: one finding per severity, and a symptom the verdict explains
_FINDINGS = {
    Severity.ERROR: ("LD001", "Loss is NaN at 3 steps, the first at step 381."),
    Severity.WARNING: ("LD101", "Loss 4.9 at step 412, 2.0x the local median of 2.4."),
    Severity.INFO: ("LD301", "The loss level moves from 1.35 to 1.62 at step 201."),
}


def _findings(worst: Severity) -> tuple[Finding, ...]:
    out = [
        codes.finding(code, msg, severity=sev, first_step=201 + 10 * i, last_step=260, line=400 + i)
        for i, (sev, (code, msg)) in enumerate(_FINDINGS.items())
        if sev <= worst
    ]
    out.append(
        codes.finding(
            "LD302",
            "The accuracy level moves at step 201.",
            first_step=201,
            evidence={"explained_by": "sorted-batching"},
        )
    )
    return tuple(sorted(out, key=lambda f: -f.severity))


def labelled_report(kind: str, worst: Severity) -> Report:
    """The sorted fixture with another verdict kind and findings up to ``worst``."""
    base = sorted_report()
    verdict = Verdict(kind, 0.7, f"cause of {kind}", f"Summary of {kind}.", f"Hint for {kind}.")  # type: ignore[arg-type]
    meta = dataclasses.replace(base.run.meta, path=f"runs/{kind}_{worst.label}.log")
    run = dataclasses.replace(base.run, meta=meta)
    return dataclasses.replace(base, run=run, verdict=verdict, findings=_findings(worst))


CASES = [(k, s) for k in BATCHING_LABELS for s in Severity]
FORMATS = sorted(RENDERERS)


def test_the_cases_cover_every_label() -> None:
    assert {k for k, _ in CASES} == set(BATCHING_LABELS)
    assert {labelled_report("sorted", s).status for s in Severity} == {"ok", *STATUS_LABELS[1:]}
    assert set(STATUS_LABELS) == {"ok", "warning", "error"}


def _check_text(fmt: str, out: str, reports: list[Report]) -> None:
    if fmt == "json":
        docs = json.loads(out)
        docs = docs if isinstance(docs, list) else [docs]
        got = [(d["verdict"]["batching"], d["status"]) for d in docs if "verdict" in d]
        assert got == [(r.verdict.batching, r.status) for r in reports]
        return
    if fmt == "junit":
        ET.fromstring(out)
    for r in reports:
        assert r.meta.path in out
        for f in r.findings:
            assert f.code in out, (fmt, f.code)


#: a binary figure draws the verdict's words and the findings' spans, and each costs a second to draw:
#: every kind (at the worst severity) and every severity (of one kind) go through it, not every pair
_FIGURE_CASES = {(k, Severity.ERROR) for k in BATCHING_LABELS} | {("sorted", s) for s in Severity}
ONE_INPUT = [
    (fmt, k, s) for fmt in FORMATS for k, s in CASES if not get_renderer(fmt).is_binary or (k, s) in _FIGURE_CASES
]


@pytest.mark.parametrize(("fmt", "kind", "worst"), ONE_INPUT, ids=[f"{f}-{k}-{s.label}" for f, k, s in ONE_INPUT])
def test_one_input(fmt: str, kind: str, worst: Severity) -> None:
    report = labelled_report(kind, worst)
    renderer = get_renderer(fmt)(color=False, width=80)
    out = renderer.render(report)
    if renderer.is_binary:
        assert isinstance(out, bytes) and len(out) > 5000
        return
    assert isinstance(out, str) and out.endswith("\n")
    _check_text(fmt, out, [report])
    if fmt in ("text", "markdown", "html"):
        words = verdict_words(kind)
        assert words.title in out or kind in ("inconclusive", "not_batching")


@pytest.mark.parametrize("verbosity", [-1, 0, 1])
@pytest.mark.parametrize("fmt", FORMATS)
def test_many_inputs(fmt: str, verbosity: int) -> None:
    reports = [labelled_report(k, s) for k, s in CASES]
    outcomes = [Outcome(r.meta.path, r, exit_code=int(r.status != "ok")) for r in reports]
    outcomes.append(Outcome("runs/broken.log", None, "runs/broken.log: file is empty", 2))
    renderer = get_renderer(fmt)(color=False, width=80, verbosity=verbosity)
    if renderer.is_binary:
        with pytest.raises(ConfigError, match="one run"):
            renderer.render_outcomes(outcomes)
        return
    out = renderer.render_outcomes(outcomes)
    assert isinstance(out, str)
    if verbosity >= 0 or fmt in ("json", "junit", "github"):
        _check_text(fmt, out, reports)
    if fmt in ("text", "markdown") and verbosity >= 0:
        for kind in BATCHING_LABELS:
            assert verdict_words(kind).short in out
        assert "unreadable" in out
