"""How the run stopped (LD010): the failure its log prints after the last training row."""

from __future__ import annotations

import polars as pl

from logdoctor import codes
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.model import LINE_NO, STEP, Run, RunEnding, Severity

#: Stops that are no fault of the training itself: a person pressed Ctrl-C, the process was sent
#: SIGTERM, the scheduler cancelled the job or its time ran out (info; crashes are warnings).
DELIBERATE = ("keyboard_interrupt", "terminated", "time_limit")


def last_step_before(run: Run, line: int) -> int | None:
    """The step of the last training row written above ``line``."""
    if LINE_NO not in run.table.columns:
        return None
    above = run.table.filter(pl.col(LINE_NO) < line)
    if above.height == 0:
        return None
    return int(above.sort(LINE_NO)[STEP][-1])


def ending_phrase(e: RunEnding) -> str:
    """``stopped at line 294: the GPU ran out of memory``: how the run ended, in a few words."""
    return f"stopped at line {e.line}: {e.cause}"


class EndingDetector(Analyzer):
    """LD010 when the log names why the run stopped after its last training row."""

    name = "ending"

    def analyze(self, run: Run) -> Detection:
        """One finding: the failure, the line that says it, the last step before it."""
        st = run.meta.structure
        e = st.ending if st is not None else None
        if e is None:
            return Detection()
        step = last_step_before(run, e.line)
        after = f" after step {step:,}" if step is not None else ""
        msg = f"The run stopped{after}: {e.cause}; line {e.line} says `{e.text}`."
        if st is not None and st.finished is False and st.planned:
            msg += f" It had reached step {st.last_step:,} of {st.planned:,} planned."
        quiet = e.kind in DELIBERATE or (st is not None and st.finished is True)
        return Detection(
            (
                codes.finding(
                    "LD010",
                    msg,
                    severity=Severity.INFO if quiet else codes.RULES["LD010"].severity,
                    first_step=step,
                    last_step=step,
                    line=e.line,
                    evidence={"kind": e.kind, "line": e.line, "block_line": e.block_line, "text": e.text},
                ),
            )
        )
