"""Live judgement: what the prefix analyses say, announced once stable, withdrawn when no longer so.

Every heavy pass is ``pipeline.analyze`` of the log's rows so far (the same detectors, diagnosis
and symptom attribution as batch mode). A finding is raised once two consecutive passes give it
(same code, rule and severity, overlapping steps); a raised finding that two consecutive passes no
longer give is withdrawn, and one whose severity two passes agree has changed is revised. The
batching verdict is announced once two consecutive passes give the same verdict *and* the prefix
covers enough of the run to tell the verdicts apart (two epochs where epochs are known, else four
of the verdict's own periods): sorted and length-grouped batches look alike within one epoch. The
verdict's own findings (LD5xx) wait for it. The final pass (when following stops) is the batch
analysis of everything read: it raises and withdraws without waiting, so what stands at the end
is what ``analyze`` of the finished log gives.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from logdoctor.model import Finding, Severity, Verdict
from logdoctor.tail.events import (
    FindingRaised,
    FindingRevised,
    FindingWithdrawn,
    TailEvent,
    VerdictChanged,
)

#: Codes of the batching diagnosis's own findings: they stand or fall with its verdict.
VERDICT_PREFIX = "LD5"


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of the run a pass saw: rows, and epochs where the run tells them."""

    rows: int
    epochs: float | None = None


def same(a: Finding, b: Finding, near: int) -> bool:
    """True when ``a`` and ``b`` are one finding seen by two passes: same code and rule, both
    run-wide or with step ranges that overlap (within ``near`` steps)."""
    if a.code != b.code or a.rule != b.rule:
        return False
    if a.first_step is None or b.first_step is None:
        return a.first_step is None and b.first_step is None
    a_last = a.last_step if a.last_step is not None else a.first_step
    b_last = b.last_step if b.last_step is not None else b.first_step
    return a.first_step - near <= b_last and b.first_step - near <= a_last


def _find(f: Finding, pool: Iterable[Finding], near: int, *, severity: bool) -> Finding | None:
    for p in pool:
        if same(f, p, near) and (not severity or p.severity == f.severity):
            return p
    return None


def covered(v: Verdict, cover: Coverage, *, min_epochs: float, min_periods: float) -> bool:
    """True when the prefix is long enough for ``v``: any inconclusive verdict; otherwise
    ``min_epochs`` epochs where epochs are known, else ``min_periods`` of the verdict's period."""
    if v.batching == "inconclusive":
        return True
    if cover.epochs is not None:
        return cover.epochs >= min_epochs
    for key in ("reset_spacing", "megabatch_period", "period"):
        spacing = v.evidence.get(key)
        if isinstance(spacing, int | float) and spacing > 0 and math.isfinite(spacing):
            return cover.rows / spacing >= min_periods
    return True


@dataclass(slots=True)
class Judge:
    """The findings and verdict announced for one followed run, and the events that change them."""

    source: str
    confirm: int = 2
    min_epochs: float = 2.0
    min_periods: float = 4.0
    standing: list[Finding] = field(default_factory=list)
    verdict: Verdict | None = None
    withdrawn: int = 0
    _previous: list[Finding] = field(default_factory=list)
    #: findings raised at once as facts of the rows read: no later pass withdraws them
    _facts: list[Finding] = field(default_factory=list)
    _candidate: tuple[str, str] | None = None
    _streak: int = 0

    @property
    def worst(self) -> Severity | None:
        """The worst severity among the findings that stand."""
        return max((f.severity for f in self.standing), default=None)

    def holds(self, f: Finding, near: int) -> bool:
        """True when a finding like ``f`` (any severity) stands."""
        return _find(f, self.standing, near, severity=False) is not None

    def raise_now(self, f: Finding, step: int | None, now: float, near: int) -> list[TailEvent]:
        """Raise ``f`` at once (a fact such as a NaN loss, not a statistic) unless it stands (a
        streak seen again through a later window widens the standing one)."""
        old = _find(f, self.standing, near, severity=False)
        if old is not None:
            wide = _widened(old, f)
            self.standing[self.standing.index(old)] = wide
            if old in self._facts:
                self._facts[self._facts.index(old)] = wide
            return []
        self.standing.append(f)
        self._facts.append(f)
        return [FindingRaised(self.source, f, step, now)]

    def judge(
        self,
        findings: Sequence[Finding],
        verdict: Verdict | None,
        cover: Coverage,
        step: int | None,
        now: float,
        *,
        near: int = 1,
        final: bool = False,
    ) -> list[TailEvent]:
        """The events of one pass (``final``: the last one, which does not wait for agreement)."""
        events = self._verdict(verdict, cover, step, now, final)
        announced = self.verdict is not None and verdict is not None and _key(verdict) == _key(self.verdict)
        cands = [f for f in findings if announced or not f.code.startswith(VERDICT_PREFIX)]
        confirmed = cands if final else [f for f in cands if _find(f, self._previous, near, severity=True)]
        events += self._withdraw(cands, step, now, near, final)
        for f in sorted(confirmed, key=_order):
            events += self._confirm(f, step, now, near)
        self._previous = cands
        return events

    def _confirm(self, f: Finding, step: int | None, now: float, near: int) -> list[TailEvent]:
        old = _find(f, self.standing, near, severity=False)
        if old is None:
            self.standing.append(f)
            return [FindingRaised(self.source, f, step, now)]
        self.standing[self.standing.index(old)] = f
        if old.severity != f.severity:
            return [FindingRevised(self.source, f, old.severity, step, now)]
        return []

    def _withdraw(
        self, cands: Sequence[Finding], step: int | None, now: float, near: int, final: bool
    ) -> list[TailEvent]:
        events: list[TailEvent] = []
        for f in list(self.standing):
            if _find(f, cands, near, severity=False) is not None or _find(f, self._facts, 0, severity=True):
                continue
            if not final and _find(f, self._previous, near, severity=False) is not None:
                continue  # missing from one pass only: wait for the next one to agree
            self.standing.remove(f)
            self.withdrawn += 1
            events.append(FindingWithdrawn(self.source, f, step, now))
        return events

    def _verdict(
        self, v: Verdict | None, cover: Coverage, step: int | None, now: float, final: bool
    ) -> list[TailEvent]:
        if v is None:
            self._candidate, self._streak = None, 0
            return []
        key = _key(v)
        self._streak = self._streak + 1 if key == self._candidate else 1
        self._candidate = key
        ok = covered(v, cover, min_epochs=self.min_epochs, min_periods=self.min_periods)
        if not final and (self._streak < self.confirm or not ok):
            return []
        previous = self.verdict
        self.verdict = v
        if previous is not None and _key(previous) == key:
            return []
        return [VerdictChanged(self.source, v, previous.batching if previous else None, step, now)]


def _widened(old: Finding, new: Finding) -> Finding:
    if old.first_step is None or new.first_step is None:
        return old
    last = max(s for s in (old.last_step, new.last_step, old.first_step) if s is not None)
    return dataclasses.replace(old, last_step=last)


def _key(v: Verdict) -> tuple[str, str]:
    return (v.batching, v.cause)


def _order(f: Finding) -> tuple[float, str]:
    return (f.first_step if f.first_step is not None else math.inf, f.code)
