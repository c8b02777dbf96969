"""A run that died before its first logged step: its failure, its ending and its plan, as a Run without rows."""

from __future__ import annotations

import re

import polars as pl

from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.ingest.parsers.events import ending_after, failures
from logdoctor.ingest.parsers.lexicon import FATAL, LAUNCHER_STOP
from logdoctor.model import REQUIRED_COLUMNS, LogEvent, Run, RunMeta, RunStructure
from logdoctor.structure.ending import stop_ending


def first_failure(events: tuple[LogEvent, ...]) -> LogEvent | None:
    """The failure that ended a run before its first row: the most specific failure block
    (``ending_after``), leaving out a launcher's stopping of its other workers when a crash follows it
    (the crash is the cause, the stop its consequence)."""
    found = failures(events)
    crash = [e.line for e in found if e.role == FATAL]
    kept = tuple(e for e in found if not (re.search(LAUNCHER_STOP, e.text) and any(c > e.line for c in crash)))
    return ending_after(kept, 0)


def empty_table() -> pl.DataFrame:
    """A step table of the Run schema with no row."""
    return pl.DataFrame(schema={c: getattr(pl, t) for c, t in REQUIRED_COLUMNS.items()})


#: A line of a document, not of a program's output: a Markdown table row, list item, quote or heading,
#: or a JSON member (``"killed_by_parent": "SIGKILL",``). A failure word there (a README describing a
#: killed run, a run's truth file) is no failure of a run.
_DOCUMENT_LINE = re.compile(r'^\s*(?:\||[-*>#]\s|"[^"]*"\s*:|\{)')


def _printed_by_a_run(e: LogEvent) -> bool:
    """True when the failure's own line (a traceback's last line, a kill line) is no document's (see
    ``_DOCUMENT_LINE``): a failure block is lines near each other, which a README's list can be too."""
    return _DOCUMENT_LINE.match(e.text) is None


def stopped_before_first_step(result: ParseResult, name: str, fmt: str) -> Run | None:
    """The Run of a log whose run died before its first training row (``result`` holds no row and
    its events a failure a program printed): no row, the failure as the structure's, the ending that
    failure names and the plan the log stated; None when the events hold no such failure (the file
    is refused as before: with no row, a failure word in a document is no evidence of a run)."""
    failure = first_failure(result.events)
    if failure is None or not _printed_by_a_run(failure):
        return None
    m = result.markers
    planned = result.total_steps or m.planned_steps
    structure = RunStructure(
        rows=0,
        planned=planned,
        planned_source=result.planned_source if planned else None,
        failure=failure,
        events=tuple(e for e in result.events if e is not failure),
        ending=stop_ending(failure.kind),
        ending_source=f"line {failure.line}",
        planned_epochs=m.epochs_planned,
        planned_epochs_source=m.epochs_planned_source if m.epochs_planned else None,
    )
    meta = RunMeta(
        path=name,
        format=fmt,
        lines_read=result.lines_read,
        lines_skipped=result.lines_skipped,
        skip_reasons=dict(sorted(result.skip_reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        total_steps=planned,
        notes=(*result.notes, "no training row: the run stopped before its first logged step"),
        structure=structure,
    )
    return Run(table=empty_table(), meta=meta)
