"""What each launch appended to the same log had: one RunPart per run, and per launch that logged no step."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from logdoctor.detectors.ending import launch_finding
from logdoctor.detectors.tooshort import MINIMUM_ROWS
from logdoctor.ingest.parsers import stepless
from logdoctor.ingest.parsers.lexicon import FATAL
from logdoctor.model import LINE_NO, STEP, Finding, LogEvent, Report, Run, RunPart, Severity

#: Fewer rows than this and no problem found: a run too short for any trend analysis, counted
#: in the report rather than listed (the smallest minimum among the too-short analyzer's).
TOO_SHORT_ROWS = min(MINIMUM_ROWS.values())
#: How a launch that logged no step ended, by its failure's kind (structure/ending.py's words).
_STOPPED = {
    "keyboard_interrupt": "interrupted",
    "job_cancelled": "cancelled",
    "time_limit": "terminated",
    "terminated": "terminated",
    stepless.KIND: "stopped",
}


def _line_span(run: Run) -> tuple[int | None, int | None]:
    """First and last log line of a run: its training rows and the evaluations written among them."""
    lines = [int(x) for f in (run.table, run.evals) if LINE_NO in f.columns for x in f[LINE_NO].drop_nulls()]
    return (min(lines), max(lines)) if lines else (None, None)


def run_part(report: Report, index: int, of: int, current: bool = False) -> RunPart:
    """One run's place in its log, its step range, its ending and its problems, from its own report."""
    run = report.run
    first, last = _line_span(run)
    steps = run.table[STEP] if run.n_steps else None
    problems = report.problems
    st = run.meta.structure
    return RunPart(
        index=index,
        of=of,
        first_line=first,
        last_line=last,
        first_step=int(steps.min()) if steps is not None else None,  # type: ignore[arg-type]
        last_step=int(steps.max()) if steps is not None else None,  # type: ignore[arg-type]
        rows=run.n_steps,
        status=report.run_status,
        findings=problems,
        too_short=run.n_steps < TOO_SHORT_ROWS and not problems,
        current=current,
        ending=st.ending if st is not None else "unknown",
        ending_source=st.ending_source if st is not None else None,
    )


def launch_part(e: LogEvent, index: int, of: int) -> RunPart:
    """A launch that logged no training step: its lines up to the failure that ended it."""
    crashed = e.role == FATAL
    return RunPart(
        index=index,
        of=of,
        first_line=e.block_line,
        last_line=e.line,
        first_step=None,
        last_step=None,
        rows=0,
        status="error" if crashed else "ok",
        findings=(launch_finding(e),) if crashed else (),
        ending="crashed" if crashed else _STOPPED.get(e.kind, "crashed"),
        ending_source=f"line {e.line}",
    )


def _pieces(report: Report, last: bool) -> list[Report | LogEvent]:
    """A run's report and the launches without a step on its lines, file order (the last run's
    later launches are its report's LD010, not listed)."""
    st = report.run.meta.structure
    launches = st.launches if st is not None else ()
    before = [e for e in launches if e.step is None]
    after = [] if last else [e for e in launches if e.step is not None]
    return [*before, report, *after]


def _relaunched(f: Finding) -> Finding:
    """An earlier launch's silent stop before its plan (LD016), with a later launch in the same log:
    the stop was answered by launching again (a restart, as a user stops a run to change its
    config), so it is information about that launch, not a problem of the log."""
    if f.code != "LD016" or f.severity < Severity.WARNING:
        return f
    return dataclasses.replace(
        f,
        severity=Severity.INFO,
        message=f"{f.message} A later launch in this log followed it (relaunched).",
        evidence={**f.evidence, "relaunched": True},
    )


def relaunched(report: Report) -> Report:
    """``report`` of a run that a later launch in its log followed, its silent stop read as a relaunch."""
    findings = tuple(_relaunched(f) for f in report.findings)
    return report if findings == report.findings else dataclasses.replace(report, findings=findings)


def run_parts(earlier: Sequence[Report], current: Report) -> tuple[RunPart, ...]:
    """One RunPart per launch of a log holding several (file order, the current run last):
    each run with training rows, and each launch that logged none; nothing for a log of one."""
    pieces = [p for r in earlier for p in _pieces(relaunched(r), False)] + _pieces(current, True)
    if len(pieces) < 2:
        return ()
    of = len(pieces)
    return tuple(
        launch_part(p, i, of) if isinstance(p, LogEvent) else run_part(p, i, of, current=p is current)
        for i, p in enumerate(pieces, start=1)
    )
