"""The frozen records a comparison is computed into; renderers only format them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from logdoctor.model import Finding, Report, Severity

Outcome = Literal["worked", "mixed", "regressed", "unchanged"]
Axis = Literal["steps", "tokens"]


@dataclass(frozen=True, slots=True)
class FindingRef:
    """A finding named in a comparison: its kind, severity and steps (the candidate's for persisting ones)."""

    code: str
    rule: str
    severity: Severity
    first_step: int | None
    last_step: int | None

    @classmethod
    def of(cls, f: Finding) -> FindingRef:
        """The reference to one finding."""
        return cls(f.code, f.rule, f.severity, f.first_step, f.last_step)


@dataclass(frozen=True, slots=True)
class Symptom:
    """One number measured the same way in both runs.

    Attributes:
        name: stable key in the JSON (``epoch_power``, ``spike_rate``...).
        label: what a person reads in the table.
        unit: how to print it: "x" (ratio to the noise), "rate", "rho", "tok/s", "fraction",
            "steps" or "tokens".
        baseline / candidate: the value in each run, None when it cannot be measured there.
        at_baseline / at_candidate: where it was measured (a period in steps), when that differs.
    """

    name: str
    label: str
    unit: str
    baseline: float | None
    candidate: float | None
    at_baseline: float | None = None
    at_candidate: float | None = None


@dataclass(frozen=True, slots=True)
class Matched:
    """The loss of both runs at one matched step or token count, and the difference's bootstrap CI."""

    axis: Axis
    at: float
    baseline: float
    candidate: float
    ci_low: float
    ci_high: float
    #: the smallest difference that matters in practice (compare/quality.py PRACTICAL); below it,
    #: a difference beyond noise still reads "same"
    practical: float = 0.0

    @property
    def diff(self) -> float:
        """Candidate minus baseline (negative: the candidate's loss is lower)."""
        return self.candidate - self.baseline

    @property
    def half_width(self) -> float:
        """Half the width of the 95% interval of the difference."""
        return (self.ci_high - self.ci_low) / 2

    @property
    def worse(self) -> bool:
        """The candidate's loss is higher beyond the noise of both runs, by a practical amount."""
        return self.ci_low > 0 and self.diff >= self.practical

    @property
    def change(self) -> str:
        """``worse``, ``better``, ``same`` (beyond noise but below a practical size) or ``unclear``."""
        if self.worse or self.better:
            return "worse" if self.worse else "better"
        return "same" if self.ci_low > 0 or self.ci_high < 0 else "unclear"

    @property
    def better(self) -> bool:
        """The candidate's loss is lower beyond the noise of both runs, by a practical amount."""
        return self.ci_high < 0 and -self.diff >= self.practical


@dataclass(frozen=True, slots=True)
class Versus:
    """One candidate against the baseline.

    Attributes:
        candidate: the candidate's report.
        resolved / new / persisting: findings only in the baseline / only in the candidate / in both.
        throughput_ratio: median tokens/s of the candidate over the baseline's, None when unknown.
        symptoms: per-run numbers (periodic power, spike rate, correlation, cost, loss levels reached).
        matched: the loss at matched steps and tokens.
        not_comparable: why an axis could not be matched ("tokens: not logged in the baseline").
        regressions: why the candidate counts as a regression (empty when it does not).
        outcome: the one-word answer.
        like_with_like: why the loss windows span whole length cycles, when they do.
    """

    candidate: Report
    resolved: tuple[FindingRef, ...]
    new: tuple[FindingRef, ...]
    persisting: tuple[FindingRef, ...]
    throughput_ratio: float | None
    symptoms: tuple[Symptom, ...]
    matched: tuple[Matched, ...]
    not_comparable: tuple[str, ...]
    regressions: tuple[str, ...]
    outcome: Outcome
    #: how the loss was compared like with like when a run's loss follows a length cycle ("" otherwise)
    like_with_like: str = ""

    def on(self, axis: Axis) -> tuple[Matched, ...]:
        """The matched points along one axis."""
        return tuple(m for m in self.matched if m.axis == axis)

    def symptom(self, name: str) -> Symptom | None:
        """A symptom by name."""
        return next((s for s in self.symptoms if s.name == name), None)


@dataclass(frozen=True, slots=True)
class Comparison:
    """A baseline run and each candidate measured against it."""

    baseline: Report
    versus: tuple[Versus, ...]

    @property
    def regressed(self) -> bool:
        """True when any candidate is a regression (the ``--fail-on-regression`` gate)."""
        return any(v.regressions for v in self.versus)
