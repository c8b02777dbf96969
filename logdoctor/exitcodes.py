"""Exit codes, named in one place, and the pure rule that picks one for a report."""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum

from logdoctor.model import Finding, Severity


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
