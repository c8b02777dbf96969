"""Name each restart: a counter that went back, an explicit resume line, or an appended run.

A restart found by build.py (the first row written after it, by line) is a ``resume_line`` when a
resume/checkpoint-load line lies between it and the row before (or the parser flagged a restart
marker; HF prints its run header and then ``Continuing training from global step N``), an
``appended_run`` when only a run header (``***** Running training *****``) does,
an ``appended_run`` too when the counter goes back to where the log began (a fresh run written to
the same file), a ``resume`` (source ``epoch_fell_back``) when only the epoch column fell back
while the step continued (a resume whose data pass starts again), else a ``counter_reset`` of the
counter that went back (``epoch`` when the step is the epoch, as in
a Keras CSVLogger file written with ``append=True``, else ``step``). A resume line above the first
row (OLMo ``Loading checkpoint ... latest-unsharded``, counter back to 1) is a restart too.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.base import COUNTER_BACK, RESTART, ParseResult
from logdoctor.ingest.parsers.clock import ELAPSED_S
from logdoctor.ingest.parsers.markers import Markers
from logdoctor.model import EPOCH, LINE_NO, STEP, Restart


def _between(lines: tuple[int, ...], lo: int, hi: int) -> bool:
    arr = np.asarray(lines)
    return bool(((arr > lo) & (arr < hi)).any()) if arr.size else False


def counter_of(epoch: np.ndarray | None, i: int) -> str:
    """``epoch`` when the epoch counter went back at row ``i``, else ``step``."""
    if epoch is not None and 0 < i < epoch.size and epoch[i] < epoch[i - 1]:
        return "epoch"
    return "step"


#: A wall clock that falls below this share of its previous value (and that had run at least
#: ``CLOCK_MIN_S``) was started again: the process restarted (LLaMA-Factory ``elapsed_time``).
CLOCK_DROP = 0.5
CLOCK_MIN_S = 60.0


def clock_resets(table: pl.DataFrame, column: str) -> np.ndarray:
    """Rows (file order) where an elapsed-time column starts again from near zero."""
    if column not in table.columns or table.height < 2:
        return np.zeros(table.height, dtype=bool)
    t = table[column].cast(pl.Float64).to_numpy()
    prev = np.concatenate(([np.nan], t[:-1]))
    with np.errstate(invalid="ignore"):
        out = (prev >= CLOCK_MIN_S) & (t < CLOCK_DROP * prev)
    return np.asarray(out, dtype=bool)


#: An epoch counter that falls below this share of its previous value while the step keeps
#: counting up fell back: the run was resumed from a checkpoint whose step continues but whose
#: data pass starts again (streaming datasets, HF ``ignore_data_skip``). An epoch never decreases
#: in one pass, so any such fall is a restart; half keeps a rounding wobble out.
EPOCH_DROP = 0.5


def epoch_falls(table: pl.DataFrame) -> np.ndarray:
    """Rows (file order) where the epoch falls below half its previous value while the step rises."""
    if EPOCH not in table.columns or STEP not in table.columns or table.height < 2:
        return np.zeros(table.height, dtype=bool)
    ep = table[EPOCH].cast(pl.Float64).fill_null(np.nan).to_numpy()
    step = table[STEP].cast(pl.Float64).fill_null(np.nan).to_numpy()
    prev_ep = np.concatenate(([np.nan], ep[:-1]))
    prev_step = np.concatenate(([np.nan], step[:-1]))
    with np.errstate(invalid="ignore"):
        out = (prev_ep > 0) & (ep < EPOCH_DROP * prev_ep) & (step > prev_step)
    return np.asarray(out, dtype=bool)


def flag_epoch_falls(t: pl.DataFrame) -> tuple[pl.DataFrame, tuple[int, ...]]:
    """Flag (``restart``) the rows where the epoch falls back while the step continues; their lines."""
    if EPOCH not in t.columns or LINE_NO not in t.columns:
        return t, ()
    t = t.sort(LINE_NO, maintain_order=True)
    fall = epoch_falls(t)
    if not fall.any():
        return t, ()
    old = t[RESTART].cast(pl.Float64).fill_null(0).to_numpy() if RESTART in t.columns else 0.0
    flags = np.where(fall, 1.0, old)
    return t.with_columns(pl.Series(RESTART, flags)), tuple(int(x) for x in t[LINE_NO].filter(pl.Series(fall)))


def name_restarts(
    raw: pl.DataFrame,
    at_lines: tuple[int, ...],
    markers: Markers,
    flagged: tuple[int, ...] = (),
    clock: tuple[int, ...] = (),
    epoch_back: tuple[int, ...] = (),
) -> tuple[Restart, ...]:
    """One Restart per resume row (``at_lines``: their line numbers), in file order.

    Args:
        raw: the rows in file order before resolution (``line_no``, ``step``).
        at_lines: line of the first row after each restart.
        markers: the log's marker lines.
        flagged: lines of rows the parser flagged after a restart marker.
        clock: lines of rows where the elapsed-time clock started again.
        epoch_back: lines of rows where the epoch fell back while the step continued.
    """
    if raw.height == 0 or LINE_NO not in raw.columns:
        return ()
    t = raw.sort(LINE_NO)
    lines = t[LINE_NO].to_numpy()
    steps = t[STEP].to_numpy()
    epoch = t[EPOCH].cast(pl.Float64).to_numpy() if EPOCH in t.columns else None
    out: list[Restart] = []
    if markers.resume_lines and min(markers.resume_lines) < lines[0]:
        out.append(Restart(int(steps[0]), "resume_line", "marker_lines"))
    for line in at_lines:
        i = int(np.searchsorted(lines, line))
        prev = int(lines[i - 1]) if i > 0 else 0
        step = int(steps[min(i, steps.size - 1)])
        if line in clock:
            out.append(Restart(step, "counter_reset", "elapsed_time"))
        elif line in epoch_back and not _between(markers.resume_lines, prev, line):
            out.append(Restart(step, "resume", "epoch_fell_back"))
        elif _between(markers.resume_lines, prev, line) or line in flagged:
            out.append(Restart(step, "resume_line", "marker_lines"))
        elif _between(markers.run_headers, prev, line):
            out.append(Restart(step, "appended_run", "marker_lines"))
        elif step <= steps[0]:  # back to where the log began: a fresh run appended
            out.append(Restart(step, "appended_run", counter_of(epoch, i)))
        else:
            out.append(Restart(step, "counter_reset", counter_of(epoch, i)))
    return tuple(out)


def flag_clock_resets(t: pl.DataFrame) -> tuple[pl.DataFrame, tuple[int, ...]]:
    """Flag (``restart``) the rows where the elapsed-time clock starts again; their lines."""
    if ELAPSED_S not in t.columns or LINE_NO not in t.columns:
        return t, ()
    t = t.sort(LINE_NO, maintain_order=True)
    reset = clock_resets(t, ELAPSED_S)
    if not reset.any():
        return t, ()
    old = t[RESTART].cast(pl.Float64).fill_null(0).to_numpy() if RESTART in t.columns else 0.0
    flags = np.where(reset, 1.0, old)
    return t.with_columns(pl.Series(RESTART, flags)), tuple(int(x) for x in t[LINE_NO].filter(pl.Series(reset)))


def restarts_of(
    result: ParseResult, resume_lines: tuple[int, ...], clock: tuple[int, ...] = (), epoch_back: tuple[int, ...] = ()
) -> tuple[Restart, ...]:
    """Name the restarts (restarts.py) from the rows in file order."""
    raw = result.table
    flagged: tuple[int, ...] = ()
    if RESTART in raw.columns and LINE_NO in raw.columns:
        flag = pl.col(RESTART).cast(pl.Float64).fill_null(0).fill_nan(0)
        flags = raw.filter((flag != 0) & (flag != COUNTER_BACK))
        flagged = tuple(int(x) for x in flags[LINE_NO])
    return name_restarts(raw, resume_lines, result.markers, flagged, clock, epoch_back)
