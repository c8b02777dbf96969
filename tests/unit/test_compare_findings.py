"""Findings resolved / new / persisting: by code and rule, then by step range within a kind."""

from __future__ import annotations

from logdoctor import codes
from logdoctor.comparison.findings import match, new_trouble
from logdoctor.model import Finding, Severity


def f(code: str, first: int | None = None, last: int | None = None, **kw: object) -> Finding:
    return codes.finding(code, "m", first_step=first, last_step=last if last is not None else first, **kw)


def test_kinds_only_in_one_run_are_resolved_or_new_and_shared_ones_persist() -> None:
    base = [f("LD502", 1, 600), f("LD503", 1, 600)]
    cand = [f("LD503", 1, 800), f("LD402", 500, 700)]
    resolved, new, persisting = match(base, cand, 800)
    assert [r.code for r in resolved] == ["LD502"]
    assert [r.code for r in new] == ["LD402"]
    assert [(r.code, r.last_step) for r in persisting] == [("LD503", 800)]  # the candidate's steps


def test_several_of_a_kind_match_by_step_range() -> None:
    base = [f("LD101", 100), f("LD101", 500)]
    cand = [f("LD101", 505), f("LD101", 900)]
    resolved, new, persisting = match(base, cand, 1000)  # tolerance 2% of 1000 steps = 20
    assert [r.first_step for r in resolved] == [100]
    assert [r.first_step for r in new] == [900]
    assert [r.first_step for r in persisting] == [505]


def test_same_code_other_rule_never_matches() -> None:
    a = Finding(code="LD101", rule="loss-spike", severity=Severity.WARNING, message="m")
    b = Finding(code="LD101", rule="other-rule", severity=Severity.WARNING, message="m")
    resolved, new, persisting = match([a], [b], 100)
    assert (len(resolved), len(new), len(persisting)) == (1, 1, 0)


def test_only_a_new_kind_of_warning_is_a_regression() -> None:
    base = [f("LD101", 100), f("LD101", 300)]
    cand = [f("LD101", 900), f("LD101", 950), f("LD201", 1, 999), f("LD402", 10, 20)]
    _, new, _ = match(base, cand, 1000)
    assert [n.code for n in new] == ["LD101", "LD101", "LD201", "LD402"]
    trouble = new_trouble(base, new)
    assert trouble == ["new warning LD201 periodic-loss"]  # a spike elsewhere and an info are not


def test_a_lone_finding_of_a_kind_on_each_side_persists_wherever_it_is() -> None:
    _, _, persisting = match([f("LD403", 10, 20)], [f("LD403", 700, 800)], 1000)
    assert [p.first_step for p in persisting] == [700]


def test_no_findings_no_changes() -> None:
    assert match([], [], 10) == ((), (), ())
