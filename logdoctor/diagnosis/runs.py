"""What each run appended to the same log had: one RunPart per run, from its own report."""

from __future__ import annotations

from collections.abc import Sequence

from logdoctor.detectors.tooshort import MINIMUM_ROWS
from logdoctor.model import LINE_NO, STEP, Report, Run, RunPart

#: Fewer rows than this and no problem found: a run too short for any trend analysis, counted
#: in the report rather than listed (the smallest minimum among the too-short analyzer's).
TOO_SHORT_ROWS = min(MINIMUM_ROWS.values())


def _line_span(run: Run) -> tuple[int | None, int | None]:
    """First and last log line of a run: its training rows and the evaluations written among them."""
    lines = [int(x) for f in (run.table, run.evals) if LINE_NO in f.columns for x in f[LINE_NO].drop_nulls()]
    return (min(lines), max(lines)) if lines else (None, None)


def run_part(report: Report, index: int, of: int, current: bool = False) -> RunPart:
    """One run's place in its log, its step range and its problems, from its own report."""
    run = report.run
    first, last = _line_span(run)
    steps = run.table[STEP] if run.n_steps else None
    problems = report.problems
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
    )


def run_parts(earlier: Sequence[Report], current: Report) -> tuple[RunPart, ...]:
    """One RunPart per run of a log holding several (file order, the current one last);
    nothing when the log holds one run."""
    if not earlier:
        return ()
    of = len(earlier) + 1
    parts = [run_part(r, i, of) for i, r in enumerate(earlier, start=1)]
    return (*parts, run_part(current, of, of, current=True))
