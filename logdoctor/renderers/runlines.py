"""The lines every human report shows for the earlier runs appended to the same log."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from logdoctor.diagnosis.runs import TOO_SHORT_ROWS
from logdoctor.model import Report, RunPart
from logdoctor.structure.ending import source_words

#: How a launch that logged no step ended, in words.
_NO_STEP_ENDINGS = {
    "interrupted": "stopped by hand (Ctrl-C)",
    "cancelled": "cancelled (scancel, no reason named)",
    "terminated": "stopped by the system (a time limit, preemption or SIGTERM)",
    "stopped": "logged no step and printed no error, then launched again",
}


def run_label(p: RunPart) -> str:
    """``run 3 of 22 (lines 120-260, steps 1000-52000)``; ``no step logged`` for a launch without rows."""
    lines = f"lines {p.first_line}-{p.last_line}" if p.first_line != p.last_line else f"line {p.first_line}"
    steps = f"steps {p.first_step}-{p.last_step}" if p.rows > 1 else f"step {p.first_step}"
    return f"run {p.index} of {p.of} ({lines}, {steps if p.rows else 'no step logged'})"


def _more(p: RunPart) -> str:
    """`` (+3 more: LD101 x2, LD301)`` for a run's problems after its worst."""
    rest = Counter(f.code for f in p.findings[1:])
    if not rest:
        return ""
    codes = ", ".join(code + (f" x{n}" if n > 1 else "") for code, n in sorted(rest.items()))
    return f" (+{sum(rest.values())} more: {codes})"


def problem_line(p: RunPart) -> str:
    """One earlier run's problems in one line: its worst, and what else it had."""
    f = p.findings[0]
    return f"{run_label(p)}: {f.severity.label} {f.code} {f.rule}: {f.message}{_more(p)}"


def worst_earlier_line(report: Report) -> tuple[str, str] | None:
    """(severity, text) naming the earlier run with the worst problem, when it is worse than this
    run's own (the file's status covers every run); None otherwise. One line, like every problem in
    the headline (code, rule, where): its message is said once, under "Earlier runs"."""
    p = report.worst_earlier_run
    own = report.problems[0].severity if report.problems else None
    if p is None or (own is not None and own >= p.findings[0].severity):
        return None
    f = p.findings[0]
    return f.severity.label, f"earlier {run_label(p)}: {f.code} {f.rule}{_more(p)}"


def index_ranges(indices: Sequence[int]) -> str:
    """``1-2, 5, 7-9`` from sorted run indices."""
    out: list[str] = []
    start = prev = indices[0]
    for i in (*indices[1:], None):
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(f"{start}-{prev}" if prev > start else str(start))
        if i is not None:
            start = prev = i
    return ", ".join(out)


def earlier_title(report: Report) -> str:
    """``Earlier runs in this log: 21 before this one (run 22 of 22), 2 with problems``."""
    earlier = report.earlier_runs
    if not earlier:
        return ""
    bad = sum(1 for p in earlier if p.findings)
    of = earlier[0].of
    return f"Earlier runs in this log: {len(earlier)} before this one (run {of} of {of}), {bad or 'none'} with problems"


def earlier_lines(report: Report) -> tuple[str, ...]:
    """A line per earlier run with problems, then one for those without, one for those too short."""
    earlier = report.earlier_runs
    if not earlier:
        return ()
    of = earlier[0].of
    lines = [problem_line(p) for p in earlier if p.findings]
    lines += [
        f"{run_label(p)}: {_NO_STEP_ENDINGS.get(p.ending, p.ending)} ({p.ending_source})"
        for p in earlier
        if not p.rows and not p.findings
    ]
    # a silent stop before the plan that a later launch answered (diagnosis/runs.py: information)
    relaunched = [p for p in earlier if p.rows and not p.findings and p.ending == "stopped"]
    lines += [
        f"{run_label(p)}: stopped before its plan ({source_words(p.ending_source)}) with no message, "
        "then launched again"
        for p in relaunched
    ]
    ok = [p.index for p in earlier if not p.findings and not p.too_short and p.rows and p not in relaunched]
    short = [p.index for p in earlier if p.too_short]
    if ok:
        lines.append(f"no problems found in run{'s' if len(ok) > 1 else ''} {index_ranges(ok)} of {of}")
    if short:
        lines.append(
            f"{len(short)} run{'s' if len(short) > 1 else ''} too short to analyse "
            f"(under {TOO_SHORT_ROWS} rows each, no problem found): {index_ranges(short)}"
        )
    return tuple(lines)


def earlier_detail(report: Report) -> tuple[str, ...]:
    """Every problem of every earlier run, one line each (``-v``)."""
    return tuple(
        f"{run_label(p)}: {f.severity.label} {f.code} {f.rule}: {f.message}"
        for p in report.earlier_runs
        for f in p.findings
    )


def runs_fact(report: Report) -> tuple[tuple[str, str], ...]:
    """("runs", "22 in this log; this report is the last, run 22 (lines 456-484, steps 1-9); ...")."""
    current = [p for p in report.runs if p.current]
    if not current:
        return ()
    c = current[0]
    bad = sum(1 for p in report.earlier_runs if p.findings)
    had = "no earlier run had problems"
    if bad:
        had = f"{bad} earlier run{'s' if bad > 1 else ''} had problems (see below)"
    where = run_label(c).removeprefix(f"run {c.index} of {c.of} ")
    return (("runs", f"{c.of} in this log; this report is the last, run {c.index} {where}; {had}"),)
