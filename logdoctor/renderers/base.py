"""The renderer interface: format a Report (never compute statistics)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from logdoctor.model import Outcome, Report


class Renderer(ABC):
    """One output format. Subclasses declare ``name``, ``extension`` and ``is_binary``."""

    name: ClassVar[str]
    extension: ClassVar[str]
    is_binary: ClassVar[bool] = False
    #: the format has a document for an input that failed (JSON, JUnit, annotations), written even
    #: when the only input failed; other formats leave errors to stderr alone
    documents_errors: ClassVar[bool] = False

    def __init__(
        self,
        *,
        verbosity: int = 0,
        color: bool | None = None,
        width: int | None = None,
        per_run: bool = True,
    ) -> None:
        self.verbosity = verbosity
        self.color = color
        self.width = width
        #: with several inputs, also print each run's report above the summary table
        self.per_run = per_run

    def per_run_reports(self, outcomes: Sequence[Outcome]) -> list[Report]:
        """The reports to print above a summary: all with ``per_run``, one input, or ``-q``."""
        shown = outcomes if self.per_run or len(outcomes) == 1 or self.verbosity < 0 else ()
        return [o.report for o in shown if o.report is not None]

    @abstractmethod
    def render(self, report: Report) -> str | bytes:
        """Format one report."""

    def render_many(self, reports: Sequence[Report]) -> str | bytes:
        """Format several reports; by default, each in turn separated by a blank line."""
        parts = [self.render(r) for r in reports]
        if self.is_binary:
            return b"".join(p for p in parts if isinstance(p, bytes))
        return "\n".join(p for p in parts if isinstance(p, str))

    def render_outcomes(self, outcomes: Sequence[Outcome]) -> str | bytes:
        """Format the outcomes of several inputs; by default the reports only (errors: stderr)."""
        return self.render_many([o.report for o in outcomes if o.report is not None])
