"""The live judge: raised once two passes agree, withdrawn/revised when they no longer do,
verdicts once stable and covered, the final pass as the batch analysis; levels spent over looks."""

from __future__ import annotations

import dataclasses
import math

from logdoctor import codes
from logdoctor.config import AnalysisConfig
from logdoctor.model import Finding, Severity, Verdict
from logdoctor.tail.events import (
    FindingRaised,
    FindingRevised,
    FindingWithdrawn,
    TailEvent,
    VerdictChanged,
)
from logdoctor.tail.judge import Coverage, Judge, covered, same
from logdoctor.tail.registry import spent, spent_config

COVER = Coverage(rows=1000, epochs=3.0)


def _f(code: str, first: int | None, last: int | None = None, sev: Severity | None = None) -> Finding:
    f = codes.finding(code, "m", first_step=first, last_step=last if last is not None else first)
    return f if sev is None else dataclasses.replace(f, severity=sev)


def _kinds(events: list[TailEvent]) -> list[tuple[str, str]]:
    out = []
    for e in events:
        if isinstance(e, FindingRaised | FindingWithdrawn | FindingRevised):
            out.append((type(e).__name__, e.finding.code))
        elif isinstance(e, VerdictChanged):
            out.append(("verdict", e.verdict.batching))
    return out


def _pass(j: Judge, found: list[Finding], v: Verdict | None = None, **kw: object) -> list[TailEvent]:
    cover = kw.pop("cover", COVER)
    return j.judge(found, v, cover, 100, 0.0, **kw)  # type: ignore[arg-type]


def test_a_finding_is_raised_when_two_consecutive_passes_give_it() -> None:
    j = Judge("a.log")
    assert _pass(j, [_f("LD101", 50)]) == []  # one pass alone: a candidate
    assert _pass(j, []) == []  # the next pass does not agree: nothing
    assert _pass(j, [_f("LD101", 50)]) == []
    assert _kinds(_pass(j, [_f("LD101", 51, 52)])) == [("FindingRaised", "LD101")]  # moved 1 step
    assert _pass(j, [_f("LD101", 50)]) == []  # raised once
    assert len(j.standing) == 1 and j.worst == Severity.WARNING


def test_withdrawn_after_two_passes_without_it_and_not_counted() -> None:
    j = Judge("a.log")
    _pass(j, [_f("LD002", 78, 90)])
    _pass(j, [_f("LD002", 78, 95)])
    assert _pass(j, []) == []  # one pass without it: wait
    assert _pass(j, [_f("LD002", 78, 99)]) == []  # back: it still stands
    _pass(j, [])
    ev = _pass(j, [])
    assert _kinds(ev) == [("FindingWithdrawn", "LD002")]
    assert j.standing == [] and j.withdrawn == 1 and j.worst is None


def test_a_severity_change_two_passes_agree_on_is_a_revision() -> None:
    j = Judge("a.log")
    _pass(j, [_f("LD301", 78, sev=Severity.WARNING)])
    _pass(j, [_f("LD301", 78, sev=Severity.WARNING)])
    info = _f("LD301", 78, sev=Severity.INFO)  # explained by the verdict now
    assert _pass(j, [info]) == []
    ev = _pass(j, [info])
    assert _kinds(ev) == [("FindingRevised", "LD301")]
    assert isinstance(ev[0], FindingRevised) and ev[0].previous == Severity.WARNING
    assert j.standing == [info] and j.worst == Severity.INFO


def test_verdict_waits_for_two_agreeing_passes_and_two_epochs() -> None:
    j = Judge("a.log")
    grouped = Verdict("grouped", 0.98, "length-grouped megabatches", "s")
    sorted_ = Verdict("sorted", 0.98, "length-sorted batches", "s")
    early = Coverage(rows=150, epochs=0.8)
    assert _pass(j, [_f("LD501", 1, 150)], sorted_, cover=early) == []
    assert _pass(j, [_f("LD501", 1, 160)], sorted_, cover=early) == []  # agreeing, too short
    assert j.verdict is None and j.standing == []  # its finding waits for it
    assert _pass(j, [_f("LD505", 1, 400)], grouped, cover=Coverage(400, 2.03)) == []
    ev = _pass(j, [_f("LD505", 1, 440)], grouped, cover=Coverage(440, 2.2))
    assert _kinds(ev) == [("verdict", "grouped")]  # LD505 raised once it passes again with it
    assert _kinds(_pass(j, [_f("LD505", 1, 480)], grouped)) == [("FindingRaised", "LD505")]


def test_coverage_without_epochs_counts_the_verdicts_periods() -> None:
    v = Verdict("sorted", 0.9, "c", "s", evidence={"reset_spacing": 80.0})
    assert not covered(v, Coverage(300), min_epochs=2, min_periods=4)
    assert covered(v, Coverage(320), min_epochs=2, min_periods=4)
    assert covered(Verdict("inconclusive", 0.2, "c", "s"), Coverage(10, 0.1), min_epochs=2, min_periods=4)


def test_the_final_pass_stands_without_waiting() -> None:
    j = Judge("a.log")
    _pass(j, [_f("LD002", 78)])
    _pass(j, [_f("LD002", 78)])
    v = Verdict("grouped", 0.98, "c", "s")
    ev = _pass(j, [_f("LD505", 1, 590)], v, final=True)
    assert _kinds(ev) == [("verdict", "grouped"), ("FindingWithdrawn", "LD002"), ("FindingRaised", "LD505")]
    assert [f.code for f in j.standing] == ["LD505"]


def test_facts_raised_at_once_are_not_withdrawn_by_a_pass_without_them() -> None:
    j = Judge("a.log")
    assert _kinds(j.raise_now(_f("LD001", 40, 41), 41, 0.0, 1)) == [("FindingRaised", "LD001")]
    assert j.raise_now(_f("LD001", 41, 44), 44, 0.0, 1) == []  # the streak seen again, widened
    assert j.standing[0].last_step == 44
    _pass(j, [])
    assert _pass(j, []) == [] and len(j.standing) == 1


def test_same_finding_rules() -> None:
    assert same(_f("LD101", 10, 12), _f("LD101", 13), near=1)
    assert not same(_f("LD101", 10, 12), _f("LD101", 14), near=1)
    assert not same(_f("LD101", 10), _f("LD102", 10), near=1)
    assert same(_f("LD201", None), _f("LD201", None), near=1)
    assert not same(_f("LD201", None), _f("LD201", 5), near=100)


def test_levels_are_spent_over_the_looks() -> None:
    total = sum(spent(0.001, k) for k in range(1, 100_000))
    assert total < 0.001 and math.isclose(total, 0.001, rel_tol=1e-4)
    cfg = spent_config(AnalysisConfig(options={"periodicity": {"alpha": 0.01}}), 2)
    assert math.isclose(float(cfg.options["periodicity"]["alpha"]), 0.01 * 6 / (math.pi**2 * 4))
    # an unconfigured level is spent from the detector's own default
    assert math.isclose(float(cfg.options["spikes"]["null_alpha"]), 0.01 * 6 / (math.pi**2 * 4))
    assert math.isclose(float(cfg.options["batching"]["max_p"]), 1e-6 * 6 / (math.pi**2 * 4))
