"""How the run ended against its plan: a crash (LD010), a silent stop before it (LD016), early stopping (LD017);
the launches appended before it, each with its ending (LD018)."""

from __future__ import annotations

import polars as pl

from logdoctor import codes
from logdoctor.detectors.base import NO_STRUCTURE, Analyzer, Detection
from logdoctor.ingest.parsers import stepless
from logdoctor.ingest.parsers.lexicon import DELIBERATE
from logdoctor.model import LINE_NO, STEP, Finding, LogEvent, Run, RunStructure, Severity
from logdoctor.structure.ending import source_words


def last_step_before(run: Run, line: int) -> int | None:
    """The step of the last training row written above ``line``."""
    if LINE_NO not in run.table.columns:
        return None
    above = run.table.filter(pl.col(LINE_NO) < line)
    if above.height == 0:
        return None
    return int(above.sort(LINE_NO)[STEP][-1])


def ending_phrase(e: LogEvent) -> str:
    """``stopped at line 294: the GPU ran out of memory``: how the run ended, in a few words."""
    return f"stopped at line {e.line}: {e.cause}"


def plan_phrase(st: RunStructure) -> str | None:
    """``step 6,200 of 10,000 (62%)`` or ``epoch 12 of 50``: how far the run got of its plan."""
    if st.planned and st.last_step is not None:
        # a table of one row per epoch (YOLO's results.csv, Keras' CSVLogger): its steps are the epochs planned
        unit = "epoch" if st.steps_per_epoch == 1 and st.planned_epochs == st.planned else "step"
        return f"{unit} {st.last_step:,} of {st.planned:,} ({100 * st.last_step / st.planned:.0f}%)"
    if st.planned_epochs and st.last_epoch is not None:
        cut = " (left unfinished)" if st.epoch_unfinished else ""
        return f"epoch {st.last_epoch:g}{cut} of {st.planned_epochs:,}"
    return None


#: Stops from outside the run that name no person (SIGTERM from a launcher or the system, a
#: scheduler's time limit or preemption): the training loop was cut, not ended by the program.
SYSTEM_STOPS = ("terminated", "time_limit")


def plan_reached(st: RunStructure) -> bool:
    """True when the run reached its planned steps or its planned epochs: an epoch counter at the plan's
    last epoch counts only when its last row was not left short of that epoch's end (``Epoch [1][5200/8576]``
    of 1 planned has not reached its plan; structure judges the ending by the same rule)."""
    by_epochs = bool(
        st.planned_epochs
        and st.last_epoch is not None
        and st.last_epoch >= st.planned_epochs
        and not st.epoch_unfinished
    )
    return bool(st.finished) or by_epochs


def stop_severity(e: LogEvent, st: RunStructure) -> Severity:
    """How much the failure that ended the run matters to its user.

    Info once the run had reached its plan or ended its loop (whatever came after), and for a person's
    stop (Ctrl-C, a job cancelled with no reason named): they chose it. Warning for a stop from outside
    (SIGTERM, a time limit, a preemption) before the plan was reached or where no plan is stated: the
    program did not end its loop itself, so the run was not completed and needs resuming; nothing in
    the log says it was done. Error for a crash."""
    if st.ending in ("finished", "early_stopped") or plan_reached(st):
        return Severity.INFO
    if e.kind in SYSTEM_STOPS:
        return Severity.WARNING
    return Severity.INFO if e.kind in DELIBERATE else codes.RULES["LD010"].severity


def _failure(run: Run, st: RunStructure, e: LogEvent) -> Finding:
    if st.rows == 0:
        return _before_first_step(st, e)
    step = e.step if e.step is not None else last_step_before(run, e.line)
    after = f" after step {step:,}" if step is not None else ""
    msg = f"The run stopped{after}: {e.cause}; line {e.line} says `{e.text}`."
    got = plan_phrase(st)
    if st.ending != "finished" and got is not None:
        msg += f" It had reached {got} planned."
    severity = stop_severity(e, st)
    if severity is Severity.WARNING:
        msg += (
            " The stop came from outside before its plan: the run was not completed"
            if got is not None
            else " The stop came from outside and no planned length is stated: unless the run was meant to go "
            "until stopped, it was not completed"
        ) + "; resume it from its last checkpoint."
    return codes.finding(
        "LD010",
        msg,
        severity=severity,
        first_step=step,
        last_step=step,
        line=e.line,
        evidence={"kind": e.kind, "line": e.line, "block_line": e.block_line, "text": e.text, "ending": st.ending},
    )


def _before_first_step(st: RunStructure, e: LogEvent) -> Finding:
    """LD010 for a run that died before its first logged step (no training row: structure/beforefirst.py)."""
    msg = f"The run stopped before its first logged step: {e.cause}; line {e.line} says `{e.text}`."
    if st.planned_epochs:
        msg += f" It had planned {st.planned_epochs:,} epochs."
    elif st.planned:
        msg += f" It had planned {st.planned:,} steps."
    return codes.finding(
        "LD010",
        msg,
        severity=stop_severity(e, st),
        line=e.line,
        # no step was logged, so no checkpoint of this run is to be resumed from (LD010's own advice)
        hint="Fix the cause the log names, then start the run again: it stopped before its first logged step.",
        evidence={
            "kind": e.kind,
            "line": e.line,
            "block_line": e.block_line,
            "text": e.text,
            "ending": st.ending,
            "rows": 0,
        },
    )


def _stopped(st: RunStructure) -> Finding:
    got = plan_phrase(st) or "an unknown point"
    return codes.finding(
        "LD016",
        f"The run stopped at {got}, no error printed: the log ends before its plan (stated by "
        f"{source_words(st.ending_source)}) with no failure, stop or early-stopping line.",
        first_step=st.last_step,
        last_step=st.last_step,
        evidence={
            "last_step": st.last_step,
            "planned": st.planned,
            "planned_epochs": st.planned_epochs,
            "last_epoch": st.last_epoch,
            "source": st.ending_source or "",
        },
        confidence=0.8,
    )


def _early(st: RunStructure) -> Finding:
    got = plan_phrase(st)
    at = f" at {got}" if got else ""
    return codes.finding(
        "LD017",
        f"Early stopping ended the run{at} ({source_words(st.ending_source)}).",
        first_step=st.last_step,
        last_step=st.last_step,
        evidence={"source": st.ending_source or "", "last_step": st.last_step},
    )


def launch_finding(e: LogEvent) -> Finding:
    """LD010 for a launch that logged no training step and died at ``e`` (its own failure)."""
    after = f" (launched again after step {e.step:,})" if e.step is not None else ""
    return codes.finding(
        "LD010",
        f"A launch{after} stopped before its first logged step: {e.cause}; line {e.line} says `{e.text}`.",
        severity=Severity.INFO if e.kind in DELIBERATE else codes.RULES["LD010"].severity,
        first_step=e.step,
        last_step=e.step,
        line=e.line,
        evidence={"kind": e.kind, "line": e.line, "block_line": e.block_line, "text": e.text, "launch": 1},
    )


#: A launch's ending in words (RunStructure.ending); an ending not listed is said as it is.
_ENDED = {"stopped": "stopped before its plan", "early_stopped": "early-stopped", "unknown": "its ending unknown"}


def _launch_words(n: int, run: Run) -> str:
    """``launch 2 (25 rows): crashed at line 481``: one launch of an appended log (its lines and steps
    are in the report's list of runs: a step of another launch is not this run's; rows, not lines,
    so that the same records handed over in memory say the same)."""
    st = run.meta.structure
    said = f"launch {n} ({run.table.height:,} rows)"
    if st is None:
        return said
    ended = _ENDED.get(st.ending, st.ending)
    at = f" at line {st.failure.line}" if st.failure is not None else ""
    return f"{said}: {ended}{at}"


def _stepless(run: Run, after: bool = False) -> list[LogEvent]:
    """The launches before ``run``'s first row (``after``: after its last row, before the next run's
    first) that logged no step and printed no failure (ingest/parsers/stepless.py): started again,
    by their start-up lines printed again."""
    st = run.meta.structure
    launches = st.launches if st is not None else ()
    return [e for e in launches if e.kind == stepless.KIND and (e.step is not None) == after]


def _stepless_words(n: int, e: LogEvent) -> str:
    return f"launch {n} (lines {e.block_line:,}-{e.line:,}, no step logged): started again before its first step"


def launches_finding(run: Run) -> Finding | None:
    """LD018 when the log holds fresh launches appended before this run (structure cut them:
    structure/appended.py, a step counter back where the log began or a run header printed
    again, or a launch stated its plan and was started again before its first step:
    ingest/parsers/stepless.py); each launch listed with its rows and ending (its lines: the report's
    runs). None for a log of one launch."""
    parts = (*run.earlier, run)
    pieces: list[Run | LogEvent] = []
    for r in parts:
        pieces += [*_stepless(r), r, *_stepless(r, after=True)]
    if len(pieces) < 2:
        return None
    listed = "; ".join(
        _stepless_words(i, p) if isinstance(p, LogEvent) else _launch_words(i, p) for i, p in enumerate(pieces, 1)
    )
    first_lines = [int(r.table[LINE_NO].min()) for r in parts[1:] if LINE_NO in r.table.columns and r.table.height]  # type: ignore[arg-type]
    stepless_lines = [p.block_line for p in pieces if isinstance(p, LogEvent)]
    none = f" ({len(stepless_lines)} of them logged no step)" if stepless_lines else ""
    return codes.finding(
        "LD018",
        f"The log holds {len(pieces)} launches of training appended one after another{none}, each starting "
        f"its step counter again; this report is launch {len(pieces)}'s, each earlier one is analysed "
        f"on its own: {listed}.",
        first_step=run.meta.structure.first_step if run.meta.structure else None,
        last_step=run.meta.structure.first_step if run.meta.structure else None,
        line=first_lines[-1] if first_lines else None,
        evidence={
            "launches": len(pieces),
            "launch_rows": ",".join(str(r.table.height) for r in parts),
            "endings": ",".join(r.meta.structure.ending if r.meta.structure else "" for r in parts),
            **({"stepless_launch_lines": ",".join(str(x) for x in stepless_lines)} if stepless_lines else {}),
        },
    )


class EndingDetector(Analyzer):
    """LD010 when the log names why the run stopped after its last training row; LD016 when it
    stopped before its plan with no message; LD017 when early stopping ended it; LD018 when
    launches were appended before it."""

    name = "ending"

    def analyze(self, run: Run) -> Detection:
        """How the run ended, from structure's failure and ending."""
        st = run.meta.structure
        if st is None:
            return Detection(skipped=NO_STRUCTURE)
        out = [_failure(run, st, st.failure)] if st.failure is not None else []
        # launched again, died before a step (one that printed no failure is LD018's, not a failure)
        later = [e for e in st.launches if e.step is not None and e.kind != stepless.KIND]
        out += [launch_finding(later[-1])] if later else []
        several = launches_finding(run)
        out += [several] if several is not None else []
        if st.ending == "stopped":
            out.append(_stopped(st))
        if st.ending == "early_stopped":
            out.append(_early(st))
        return Detection(tuple(out))
