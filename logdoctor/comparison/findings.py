"""Findings resolved, new and persisting: matched by code and rule, then by step range within a kind."""

from __future__ import annotations

from collections.abc import Sequence

from logdoctor.comparison.result import FindingRef
from logdoctor.model import Finding, Severity

#: Two findings of the same kind with step ranges this far apart (fraction of the longer run) still match.
STEP_TOLERANCE = 0.02


def _gap(a: Finding, b: Finding) -> float:
    """Steps between two findings' ranges (0 when they overlap or either is run-wide)."""
    if a.first_step is None or b.first_step is None:
        return 0.0
    a_hi = a.last_step if a.last_step is not None else a.first_step
    b_hi = b.last_step if b.last_step is not None else b.first_step
    return float(max(0, max(a.first_step, b.first_step) - min(a_hi, b_hi)))


def _pairs(base: list[Finding], cand: list[Finding], tol: float) -> list[tuple[int, int]]:
    """Greedy closest pairs of one kind: a lone finding on each side always pairs."""
    if len(base) == 1 and len(cand) == 1:
        return [(0, 0)]
    options = sorted((_gap(b, c), i, j) for i, b in enumerate(base) for j, c in enumerate(cand))
    used_b: set[int] = set()
    used_c: set[int] = set()
    out = []
    for gap, i, j in options:
        if gap <= tol and i not in used_b and j not in used_c:
            used_b.add(i)
            used_c.add(j)
            out.append((i, j))
    return out


def match(
    baseline: Sequence[Finding], candidate: Sequence[Finding], span: int
) -> tuple[tuple[FindingRef, ...], tuple[FindingRef, ...], tuple[FindingRef, ...]]:
    """(resolved, new, persisting) between two runs' findings; ``span`` is the longer run's steps."""
    tol = max(1.0, STEP_TOLERANCE * span)
    resolved: list[FindingRef] = []
    new: list[FindingRef] = []
    persisting: list[FindingRef] = []
    for kind in dict.fromkeys((f.code, f.rule) for f in (*baseline, *candidate)):
        base = [f for f in baseline if (f.code, f.rule) == kind]
        cand = [f for f in candidate if (f.code, f.rule) == kind]
        pairs = _pairs(base, cand, tol)
        persisting += [FindingRef.of(cand[j]) for _, j in pairs]
        resolved += [FindingRef.of(f) for i, f in enumerate(base) if i not in {p[0] for p in pairs}]
        new += [FindingRef.of(f) for j, f in enumerate(cand) if j not in {p[1] for p in pairs}]
    return tuple(resolved), tuple(new), tuple(persisting)


def new_trouble(baseline: Sequence[Finding], new: Sequence[FindingRef]) -> list[str]:
    """The new warnings/errors that make a regression: a kind the baseline did not have at that
    severity or above (a spike of a kind the baseline had, at another step, is not news)."""
    out = []
    for code in dict.fromkeys(r.code for r in new if r.severity >= Severity.WARNING):
        refs = [r for r in new if r.code == code and r.severity >= Severity.WARNING]
        had = [f for f in baseline if f.code == code and f.severity >= refs[0].severity]
        if not had:
            out.append(f"new {refs[0].severity.label} {code} {refs[0].rule}")
    return out
