"""Failure events among a run's rows: recovered OOMs, skipped non-finite batches, crashed launches, lost checkpoints."""

from __future__ import annotations

from collections.abc import Sequence

from logdoctor import codes
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.ingest.parsers.lexicon import FATAL
from logdoctor.model import Finding, LogEvent, Run

#: Steps named in a message (all of them go to the evidence).
SHOWN = 6


def _code(e: LogEvent) -> str | None:
    """The finding code of an event among the rows (structure/ending.py placed it), None for none."""
    if e.kind == "oom_recovered":
        return "LD012"
    if e.kind == "nonfinite_skipped":
        return "LD013"
    if e.kind == "restore_failed" and not e.traceback:
        return "LD015"
    return "LD014" if e.role == FATAL else None


_WHAT = {
    "LD012": "time(s) the GPU ran out of memory and the framework went on without the batch",
    "LD013": "batch(es) with a NaN/inf loss or gradient whose update was skipped or rolled back",
    "LD014": "launch(es) crashed and the run was launched again",
    "LD015": "checkpoint(s) could not be restored and training went on without them",
}


def _finding(code: str, events: Sequence[LogEvent]) -> Finding:
    steps = [e.step for e in events if e.step is not None]
    first = events[0]
    where = ""
    if steps:
        shown = ", ".join(f"{s:,}" for s in sorted(set(steps))[:SHOWN])
        more = ", ..." if len(set(steps)) > SHOWN else ""
        where = f" after step{'s' if len(set(steps)) > 1 else ''} {shown}{more}"
    before = "" if steps else " before the first training step"
    msg = f"{len(events)} {_WHAT[code]}{where}{before}; the first, line {first.line}: {first.cause}: `{first.text}`."
    return codes.finding(
        code,
        msg,
        first_step=min(steps) if steps else None,
        last_step=max(steps) if steps else None,
        line=first.line,
        evidence={
            "count": len(events),
            "kind": first.kind,
            "first_line": first.line,
            "text": first.text,
            "steps": ",".join(str(s) for s in sorted(set(steps))),
        },
        confidence=0.9,
    )


class FailureEventDetector(Analyzer):
    """Each class of failure event among the run's rows reported once: its count, the steps it
    touched and its first line (the events structure placed: ingest/parsers/events.py, lexicon.py)."""

    name = "failure_events"

    def analyze(self, run: Run) -> Detection:
        """One finding per class of event; nothing for a run without events among its rows."""
        st = run.meta.structure
        if st is None or not st.events:
            return Detection()
        groups: dict[str, list[LogEvent]] = {}
        for e in st.events:
            code = _code(e)
            if code is not None:
                groups.setdefault(code, []).append(e)
        return Detection(tuple(_finding(c, groups[c]) for c in sorted(groups)))
