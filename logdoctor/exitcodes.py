"""Exit codes, named in one place, and the pure rule that picks one for a report."""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

from logdoctor.model import Finding, Report, Severity


class ExitCode(IntEnum):
    """Process exit codes of every logdoctor command."""

    OK = 0
    FINDINGS = 1
    BAD_INPUT = 2


def should_fail(findings: Iterable[Finding], fail_on: Severity) -> bool:
    """Return True when any finding is at or above the ``fail_on`` severity."""
    return any(f.severity >= fail_on for f in findings)


def worst(codes: Iterable[ExitCode]) -> ExitCode:
    """The exit code of several runs: the worst (highest) of them, OK when there are none."""
    return max(codes, default=ExitCode.OK)


#: What ``check`` gates on in a log holding several appended runs: every run, or the last only.
RUNS_CHOICES = ("all", "last")


def gated_findings(report: Report, runs: str = "all") -> tuple[Finding, ...]:
    """The findings ``check`` weighs: the last run's, plus every earlier appended run's problems
    unless ``runs`` is ``"last"`` (the file's status covers all of its runs, and so does the gate)."""
    if runs not in RUNS_CHOICES:
        raise ValueError(f"runs must be one of {RUNS_CHOICES}, not {runs!r}")
    earlier = () if runs == "last" else tuple(f for p in report.earlier_runs for f in p.findings)
    return (*report.findings, *earlier)
