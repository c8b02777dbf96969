"""How a run ended against its plan: its failure events placed on its rows, and the ending named with its source.

Events (ingest/parsers/events.py) are read where they stand:

1. The failure or stop printed after the run's last training row ended it (``failure``); so did one
   printed between its last two rows when the last is at most one logging interval on (the
   trainer's exit hook wrote the pending row after logging the exception: detectron2).
2. A failure block among the rows (or before the first), followed by a restart before the next
   row (a resume line, a run header, a first row that starts again), is a launch that crashed and
   was launched again. A checkpoint that could not be found, said without a traceback after the
   first row, is a relaunch that went on without it (before the first row: a first start, which
   has no checkpoint yet).
3. An out-of-memory or NaN guard among the rows with no restart after it was caught: the process
   went on, so it is read as a recovered OOM or a skipped non-finite batch. Any other failure
   with no restart after it was caught by the program and says nothing of the run.

The ending, in order: a failure after the last row and before any line saying the loop ended
(``interrupted`` for Ctrl-C, ``cancelled`` for a job cancelled with no reason named (scancel),
``terminated`` for the system's stop: a time limit, a preemption, SIGTERM; else ``crashed`` unless
the plan was reached; a failure after such a line came once training was over); an early-stopping
line; the plan reached (``finished``); an end-of-training line (``finished``, or ``early_stopped``
when the best evaluation is exactly the stated patience before the end); the plan known and
not reached (``early_stopped`` when the best evaluation is exactly the stated patience before the
end, else ``stopped``: before its plan with no message; an epoch counter that reached the planned
epochs says ``finished`` whatever the step count); otherwise ``unknown``. A log followed
live that has not failed is ``running``; a snapshot saved during training (a checkpoint's
``trainer_state.json``) that has not reached its plan is ``unknown``.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import polars as pl

from logdoctor import vocab
from logdoctor.ingest.parsers.events import ending_after, failures
from logdoctor.ingest.parsers.lexicon import BY_NAME, DONE, EARLY_STOP, FATAL, RECOVERED, STOP
from logdoctor.model import LINE_NO, STEP, LogEvent, RunStructure
from logdoctor.structure.launches import split_launches
from logdoctor.vocab import Direction

#: A failure among the rows that the program caught, read as the recovery it was.
_CAUGHT = {"cuda_oom": "oom_recovered", "nan_guard": "nonfinite_skipped"}
#: How each deliberate stop ends a run.
_STOPS = {
    "keyboard_interrupt": "interrupted",
    "job_cancelled": "cancelled",
    "time_limit": "terminated",
    "terminated": "terminated",
}


def stop_ending(kind: str) -> str:
    """The ending a failure of ``kind`` gives a run that had not reached its plan: the stop it names
    (``interrupted``, ``cancelled``, ``terminated``), else ``crashed``."""
    return _STOPS.get(kind, "crashed")


#: An evaluation loss, the series a patience is counted on.
EVAL_LOSS = r"(?i)^(?:eval|val|valid|validation|dev|test)[_/ .-]?loss$"


#: Where a planned length was read (RunStructure.planned_source, planned_epochs_source).
PLAN_SOURCES = {
    "column": "the step counter's total",
    "header": "the log's header",
    "config": "the config dump",
    "progress_bar": "the progress bar",
    "args.yaml": "args.yaml beside the log",
    "opt.yaml": "opt.yaml beside the log",
    "config.yaml": "config.yaml beside the log (SOLVER.MAX_ITER)",
    "config.py": "the config dump beside the log (train_cfg)",
    "hyperparams.yaml": "hyperparams.yaml beside the log",
}
#: Where a planned number of epochs was read (RunStructure.planned_epochs_source).
EPOCH_PLAN_SOURCES = {
    "column": "the epoch counter's total",
    "header": "the epoch headers (Epoch e/N)",
    "config": "the config dump",
    "args.yaml": "args.yaml beside the log",
    "opt.yaml": "opt.yaml beside the log",
    "config.py": "the config dump beside the log (train_cfg)",
    "hyperparams.yaml": "hyperparams.yaml beside the log (number_of_epochs)",
}


def source_words(source: str | None) -> str:
    """``line 294`` stays; ``planned column`` reads ``the step counter's total``."""
    if not source:
        return ""
    if source.startswith("planned epochs "):
        name = source.removeprefix("planned epochs ")
        return EPOCH_PLAN_SOURCES.get(name, name)
    if source.startswith("planned "):
        name = source.removeprefix("planned ")
        return PLAN_SOURCES.get(name, name)
    return source


class Placed(NamedTuple):
    """A run's events placed on its rows: the failure after its last row, the others, and the
    failures that ended launches without a training row (structure/launches.py)."""

    failure: LogEvent | None
    events: tuple[LogEvent, ...]
    launches: tuple[LogEvent, ...] = ()


def _caught(e: LogEvent) -> LogEvent | None:
    """A failure among the rows that the process survived, as the recovery it was; None for any other."""
    if e.kind not in _CAUGHT:
        return None
    sig = BY_NAME[_CAUGHT[e.kind]]
    return dataclasses.replace(e, kind=sig.name, role=RECOVERED, cause=f"{sig.cause} (the error was caught)")


#: Where a failure written on a row's own line stands: after the row's text (see ``_last_before_exit``).
GLUED = 0.5


def _last_before_exit(
    fails: tuple[LogEvent, ...], lines: np.ndarray, steps: np.ndarray, restarts: tuple[int, ...]
) -> float:
    """Where the run's last row before it failed stands: events after it are after the run. The
    row above a failure block that stands between the last two rows when the last row is at most
    one logging interval on and no restart comes between (the trainer logged the exception, then
    its exit hook wrote the pending row: detectron2's ``TrainerBase.train`` logs ``Exception during
    training`` and ``finally`` runs ``after_train``, whose writer flushes the last metrics and whose
    timer prints the training speed); else the last row's line. A failure written on that row's
    own line follows its text (a progress bar ends no line, so the next print continues it: Keras'
    ``Batch 7: Invalid loss, terminating training`` after the bar's last update, then the bar's
    final redraw): the row then stands ``GLUED`` before its line."""
    if lines.size < 3:
        return float(lines[-1])
    prev, end = int(lines[-2]), int(lines[-1])
    gaps = np.diff(steps)
    stride = float(np.median(gaps[gaps > 0])) if (gaps > 0).any() else 0.0
    between = [e for e in fails if prev <= e.block_line and e.line < end]
    restarted = any(prev < r <= end for r in restarts)
    if between and not restarted and 0 < steps[-1] - steps[-2] <= stride:
        return prev - GLUED if any(e.block_line == prev for e in between) else float(prev)
    return float(end)


def place_events(events: tuple[LogEvent, ...], rows: pl.DataFrame, restarts: tuple[int, ...]) -> Placed:
    """Read a run's events where they stand (module rules 1-3), each with the step of the last
    training row above it.

    Args:
        events: the events written on the run's lines, file order.
        rows: the run's training rows (``line_no``, ``step``), as written (before resumes resolved).
        restarts: lines that restart the run (resume lines, run headers, first rows after a restart).
    """
    if rows.height == 0 or LINE_NO not in rows.columns:
        return Placed(ending_after(events, 0), ())
    rows = rows.select(LINE_NO, STEP).drop_nulls().sort(LINE_NO)
    lines, steps = rows[LINE_NO].to_numpy(), rows[STEP].to_numpy()
    last = _last_before_exit(failures(events), lines, steps, restarts)
    sides = split_launches(failures(events), int(lines[0]), last, restarts)
    failure = ending_after(sides.own, last)
    taken = {e.line for e in (*sides.before, *sides.after)}
    out: list[LogEvent] = []
    for e in events:
        at = int(np.searchsorted(lines, e.line))
        e = dataclasses.replace(e, step=int(steps[at - 1]) if at else None)
        if e.role in (FATAL, STOP) and (e.line > last or e.line in taken):
            continue
        if e.role not in (FATAL, STOP):
            out.append(e)
            continue
        nxt = int(lines[min(at, lines.size - 1)])
        relaunched = any(e.line < r <= nxt for r in restarts)
        if e.kind == "restore_failed" and not e.traceback:
            out += [e] if at else []  # a first start finds no checkpoint yet: nothing lost
        elif relaunched:
            out.append(e)
        elif at and (caught := _caught(e)) is not None:
            out.append(caught)
    if failure is not None:
        failure = dataclasses.replace(failure, step=int(steps[-1]))
    after = tuple(dataclasses.replace(e, step=int(steps[-1])) for e in sides.after)
    return Placed(failure, tuple(out), (*sides.before, *after))


def _after(events: tuple[LogEvent, ...], role: str, last_line: int | None) -> LogEvent | None:
    """The last event of ``role`` written after the last training row."""
    got = [e for e in events if e.role == role and (last_line is None or e.line > last_line)]
    return got[-1] if got else None


def patience_pattern(evals: pl.DataFrame, patience: int | None) -> tuple[int, str] | None:
    """(evaluations since the best, the series) when that count equals the stated ``patience`` (the run
    stopped as early stopping stops it), else None.

    The series is the eval loss (its first minimum); else, or when the loss does not show the pattern,
    an evaluation metric that is better higher (``mAP``, accuracy): its last maximum, as a stopper that
    counts a tie as an improvement finds it (YOLOv5 ``utils/torch_utils.py`` and Ultralytics
    ``EarlyStopping.__call__``: ``if fitness >= self.best_fitness: self.best_epoch = epoch``).
    """
    if not patience or evals.height <= patience:
        return None
    losses = [c for c in evals.columns if pl.Series([c]).str.contains(EVAL_LOSS)[0]]
    higher = [c for c in evals.columns if c not in losses and vocab.direction(c) is Direction.UP]
    for col, up in [*((c, False) for c in losses[:1]), *((c, True) for c in higher)]:
        if evals[col].dtype not in (pl.Float64, pl.Float32, pl.Int64):
            continue
        vals = evals[col].cast(pl.Float64).drop_nulls().drop_nans().to_numpy()
        if vals.size <= patience or not np.isfinite(vals).all():
            continue
        best = int(vals.size - 1 - int(np.argmax(vals[::-1]))) if up else int(np.argmin(vals))
        since = int(vals.size - 1 - best)
        if since == patience:
            return since, col
    return None


class Plan(NamedTuple):
    """What the run planned and reached, as structure read it."""

    planned: int | None
    planned_source: str | None
    finished: bool | None
    epochs: int | None = None
    epochs_source: str | None = None
    last_epoch: float | None = None
    #: the epoch counter is fractional progress (HF's 2.95), not an epoch's label (0-based or 1-based)
    epoch_progress: bool = False
    #: the last row's position in its epoch (``[4700/7330]``) is more than a logging interval short of
    #: the epoch's end: the epoch it belongs to was not completed
    epoch_unfinished: bool = False


def _epochs_finished(plan: Plan) -> bool | None:
    """True when the epoch counter reached the planned epochs, False when it stopped more than one
    below them, None otherwise (a counter from 0 ends one below them: unknown) or when unknown."""
    if not plan.epochs or plan.last_epoch is None:
        return None
    if plan.last_epoch >= plan.epochs:
        return True
    return False if plan.last_epoch < plan.epochs - 1 or plan.epoch_progress else None


def judge(
    placed: Placed,
    plan: Plan,
    last_line: int | None,
    patience: int | None,
    evals: pl.DataFrame,
    *,
    live: bool = False,
    snapshot: bool = False,
) -> tuple[str, str | None]:
    """(ending, its source) by the module's rules."""
    f = placed.failure
    early = _after(placed.events, EARLY_STOP, last_line)
    done = _after(placed.events, DONE, last_line)
    ended = [e for e in (early, done) if e is not None and (f is None or e.line < f.line)]
    if f is not None and not ended:
        if f.kind in _STOPS:
            return _STOPS[f.kind], f"line {f.line}"
        if not plan.finished:
            return "crashed", f"line {f.line}"
    if early is not None:
        return "early_stopped", f"line {early.line}"
    if plan.finished:
        return "finished", f"planned {plan.planned_source}"
    if done is not None:
        # the loop's end line with its best evaluation exactly the stated patience before the end: the
        # early stopping that the config states stopped it (Marian prints "Training finished" either way)
        found = patience_pattern(evals, patience)
        if found is not None:
            since, col = found
            return "early_stopped", f"line {done.line}; patience {patience}: best {col} {since} evaluations before"
        return "finished", f"line {done.line}"
    if live:
        return "running", None
    return _against_plan(plan, patience, evals, snapshot)


def _against_plan(plan: Plan, patience: int | None, evals: pl.DataFrame, snapshot: bool) -> tuple[str, str | None]:
    """(ending, source) of a run that printed no ending: finished, early-stopped, stopped before its
    plan, or unknown."""
    by_epochs = _epochs_finished(plan)
    if by_epochs is True and not plan.epoch_unfinished:  # the epoch counter reached the plan: the steps
        return "finished", f"planned epochs {plan.epochs_source}"  # were placed short of it
    reached = by_epochs if plan.finished is None else plan.finished
    last_label = plan.epochs and plan.last_epoch is not None and plan.last_epoch >= plan.epochs - 1
    if by_epochs is not False and last_label:
        # the last epoch's label may be the plan's last (counted from 0 or 1): a stop is claimed only when
        # the row says its epoch was left unfinished
        reached = False if plan.epoch_unfinished else None
    if reached is False and not snapshot:
        found = patience_pattern(evals, patience)
        if found is not None:
            since, col = found
            return "early_stopped", f"patience {patience}: best {col} {since} evaluations before the end"
        by = f"planned {plan.planned_source}" if plan.finished is False else f"planned epochs {plan.epochs_source}"
        return "stopped", by
    return "unknown", None


def with_ending(st: RunStructure, placed: Placed, plan: Plan, ending: tuple[str, str | None]) -> RunStructure:
    """``st`` with its events, failure, epoch plan and ending."""
    return dataclasses.replace(
        st,
        failure=placed.failure,
        events=placed.events,
        launches=placed.launches,
        ending=ending[0],
        ending_source=ending[1],
        planned_epochs=plan.epochs,
        planned_epochs_source=plan.epochs_source if plan.epochs else None,
        last_epoch=plan.last_epoch,
        epoch_unfinished=plan.epoch_unfinished,
    )
