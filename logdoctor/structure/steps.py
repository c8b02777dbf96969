"""Place rows in the run from marker lines: epochs of each row, global steps of two-level counters.

Rules (applied before duplicates and resumes are resolved, rows in file order):

1. **Epochs from marker lines.** When the table has no epoch column and the log has epoch marker
   lines (``Epoch 3/10``, ``##### Epoch 3 #####``, ``epoch 2 finished``, tqdm ``Epoch 3: 34%|``),
   each row gets the epoch of the last opening marker above it (or of the first closing marker
   below it).
2. **Two-level counters.** A per-epoch batch counter (``batches``/``batches_total``: Keras
   ``3/285 [==>...]``) under epoch markers gives the global step ``(epoch - e0) * total + batch``,
   ``e0`` the first epoch of the log (0- and 1-based epochs alike).
3. **Rows without a step.** When the log prints no step, rows are numbered within each run (a run
   header such as ``***** Running training *****`` starts the numbering again). When the rows
   carry a fractional epoch and the log states the planned steps and epochs, the logging stride is
   ``mean epoch increase per row x steps per epoch`` and row ``k`` is step ``k x stride``; a
   ``--stride N`` the user gives wins (every row is N optimizer steps). A resume line naming its
   global step (HF ``Continuing training from global step 400``) starts the numbering again there.
4. **Batches, not updates.** When the step counts batches (Sockeye ``B=``) and the log states
   the update interval (``--update-interval 2``), the optimizer step is ``batch / interval``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.markers import Markers
from logdoctor.model import BATCHES, BATCHES_TOTAL, EPOCH, LINE_NO, STEP
from logdoctor.structure.barsteps import bar_steps
from logdoctor.structure.epochlen import EpochLength, describe_length, run_lengths

#: Start of the note that says the user's ``--stride`` placed the rows (stride_source ``given``).
GIVEN_NOTE = "--stride"


def epochs_from_markers(table: pl.DataFrame, markers: Markers) -> pl.DataFrame | None:
    """The table with an ``epoch`` column read from marker lines (rule 1); None when not possible."""
    if not markers.epoch_lines or EPOCH in table.columns or table.height == 0:
        return None
    lines = np.asarray(markers.epoch_lines)
    values = np.asarray(markers.epoch_values, dtype=float)
    row = table[LINE_NO].to_numpy()
    if markers.epoch_ends:
        idx = np.searchsorted(lines, row, side="left")
        ok = idx < lines.size
    else:
        idx = np.searchsorted(lines, row, side="right") - 1
        ok = idx >= 0
    epoch = np.where(ok, values[np.clip(idx, 0, lines.size - 1)], np.nan)
    if np.isnan(epoch).mean() > 0.5:
        return None
    return table.with_columns(pl.Series(EPOCH, epoch))


def _as_batches(table: pl.DataFrame, samples: int | None) -> pl.DataFrame:
    """Sample counters (``32/58`` after ``Train on 58 samples``) -> batch counters: the batch
    size is the smallest partial count, batch = ceil(count / size)."""
    if not samples or table[BATCHES_TOTAL].max() != samples:
        return table
    partial = table.filter(pl.col(BATCHES) < pl.col(BATCHES_TOTAL))[BATCHES]
    size = partial.min() if partial.len() else None
    if not size or size <= 1:  # type: ignore[operator]
        return table
    return table.with_columns(
        (pl.col(BATCHES) / size).ceil().alias(BATCHES),
        (pl.col(BATCHES_TOTAL) / size).ceil().alias(BATCHES_TOTAL),
    )


def two_level_steps(table: pl.DataFrame, samples: int | None = None) -> pl.DataFrame | None:
    """Global steps from an epoch and a per-epoch batch counter (rule 2); None when absent."""
    if not {EPOCH, BATCHES, BATCHES_TOTAL} <= set(table.columns):
        return None
    e0 = table[EPOCH].drop_nulls().drop_nans().min()
    if e0 is None:
        return None
    table = _as_batches(table, samples)
    step = (pl.col(EPOCH) - e0) * pl.col(BATCHES_TOTAL) + pl.col(BATCHES)
    out = table.with_columns(step.cast(pl.Int64, strict=False).alias(STEP))
    return out.filter(pl.col(STEP).is_not_null())


def _next_epoch_from_start(ep: np.ndarray, step: np.ndarray, up: np.ndarray) -> bool:
    """One epoch change is a per-epoch counter only when the epoch never falls, rises by exactly
    one there, and the step goes back to where the log's first epoch began counting (``epoch 2,
    iter 50`` after ``epoch 1, iter 7300``): a fresh launch starts again at the log's first epoch,
    and a resume keeps its checkpoint's step, so neither reads so."""
    at = int(np.flatnonzero(up)[0]) + 1
    return bool(np.all(np.diff(ep) >= 0) and ep[at] - ep[at - 1] == 1 and step[at] <= step[0])


def per_epoch_counter(table: pl.DataFrame, stated: int | None = None) -> tuple[pl.DataFrame, EpochLength] | None:
    """Global steps when the step counts within the epoch (``epoch 3, iter 1000``): the step goes
    back wherever the epoch goes up. Steps per epoch of each run appended to the log: from a
    running total beside the counter, else the largest per-epoch step (epochlen.py); the last
    run's length is returned with the rows."""
    if EPOCH not in table.columns or table.height < 4:
        return None
    ep = table[EPOCH].cast(pl.Float64).to_numpy()
    step = table[STEP].to_numpy()
    if not np.all(np.isfinite(ep)) or np.any(ep != np.round(ep)):
        return None
    up = np.diff(ep) > 0
    if up.sum() < 1 or (np.diff(step)[up] < 0).mean() < 0.9:
        return None
    if up.sum() == 1 and not _next_epoch_from_start(ep, step, up):
        return None
    back = (np.diff(ep) < 0) | ((np.diff(ep) == 0) & (np.diff(step) <= 0))
    run = np.concatenate(([0], np.cumsum(back)))
    spe = np.zeros(step.size)
    lengths = run_lengths(table, run, stated)
    for r, length in enumerate(lengths):
        spe[run == r] = length.steps
    glob = (ep - ep.min()) * spe + step
    return table.with_columns(pl.Series(STEP, glob.astype(np.int64))), lengths[-1]


def number_runs(table: pl.DataFrame, headers: tuple[int, ...]) -> pl.DataFrame:
    """Rows numbered 1, 2, ... within each run; a run header line restarts the count (rule 3)."""
    if not headers:
        return table
    run = np.searchsorted(np.asarray(sorted(headers)), table[LINE_NO].to_numpy(), side="right")
    t = table.with_columns(pl.Series("_run", run))
    return t.with_columns(pl.int_range(1, pl.len() + 1).over("_run").alias(STEP)).drop("_run")


def resume_offsets(
    table: pl.DataFrame, resumes: tuple[tuple[int, int], ...], headers: tuple[int, ...] = ()
) -> np.ndarray:
    """Per row, the global step a resume line above its run names (``Continuing training from
    global step 400``: the run's row k is step 400 + k x stride); 0 where none does, and 0 again
    after a later run header that no resume line follows (a fresh run appended; rule 3)."""
    out = np.zeros(table.height, dtype=np.int64)
    if not resumes or table.height == 0:
        return out
    line = table[LINE_NO].to_numpy()
    for at, step in sorted([*resumes, *((h, 0) for h in headers)]):
        out[line > at] = step  # in line order: the last header or resume line above a row wins
    return out


def order_stride(table: pl.DataFrame, planned: int | None, epochs: int | None) -> int | None:
    """Logging stride of rows numbered by order, from a fractional epoch (rule 3)."""
    if not planned or not epochs or EPOCH not in table.columns or table.height < 3:
        return None
    ep = table[EPOCH].cast(pl.Float64).to_numpy()
    step = table[STEP].to_numpy()
    run_start = np.flatnonzero(np.diff(step) < 0) + 1
    bounds = np.concatenate(([0], run_start, [step.size]))
    longest = int(np.argmax(np.diff(bounds)))
    seg = ep[bounds[longest] : bounds[longest + 1]]
    seg = seg[np.isfinite(seg)]
    if seg.size < 3 or np.all(seg == np.round(seg)) or seg[-1] <= seg[0]:
        return None
    per_row = (seg[-1] - seg[0]) / (seg.size - 1) * planned / epochs
    return round(float(per_row)) if per_row >= 1.5 else None


def agreement(table: pl.DataFrame, markers: Markers) -> str | None:
    """When a log has an epoch column and epoch marker lines: whether they agree on where epochs
    start (rows whose epoch changes), and which wins (the column: it is on every row)."""
    if EPOCH not in table.columns or not markers.epoch_lines or table.height < 2:
        return None
    marked = epochs_from_markers(table.drop(EPOCH), markers)
    if marked is None:
        return None

    def starts(t: pl.DataFrame) -> set[int]:
        ep = t[EPOCH].cast(pl.Float64).fill_nan(None).forward_fill().to_numpy()
        return set(np.flatnonzero(np.diff(ep) != 0).tolist())

    col, mark = starts(table), starts(marked)
    if col == mark:
        return f"epochs: the epoch column and {len(markers.epoch_lines)} epoch marker lines agree"
    return (
        f"epochs: the epoch column and the epoch marker lines disagree ({len(col ^ mark)} epoch "
        "starts differ); the epoch column wins (it is written on every row)"
    )


class Placed(NamedTuple):
    """Rows placed by rules 1-4."""

    table: pl.DataFrame
    epoch_source: str | None  # where each row's epoch was read (RunStructure.epoch_source)
    notes: tuple[str, ...]
    numbered: bool  # the steps are only row numbers
    length: EpochLength | None = None  # steps per epoch of a per-epoch step counter (rule 2)


def place(
    table: pl.DataFrame,
    markers: Markers,
    from_order: bool,
    planned: int | None,
    per_update: int | None = None,
    stride: int | None = None,
) -> Placed:
    """Apply rules 1-4.

    ``per_update``: batches per optimizer update when the step column counts batches (rule 4).
    ``stride``: the user's ``--stride`` (rule 3: rows without a step are every ``stride`` steps).
    """
    batches: tuple[str, ...] = ()
    if per_update and per_update > 1 and STEP in table.columns:
        table = table.with_columns(pl.col(STEP) // per_update)
        batches = (f"the log counts batches: step = batch / {per_update} (update interval)",)
    placed = _place(table, markers, from_order, planned, stride)
    notes = placed.notes
    if stride and not from_order:
        notes = (*notes, f"the log prints its steps: --stride {stride} not used")
    return placed._replace(notes=(*batches, *notes))


def _place(
    table: pl.DataFrame, markers: Markers, from_order: bool, planned: int | None, given: int | None = None
) -> Placed:
    """Rules 1-3 on steps already in optimizer updates (see ``place``)."""
    source = "column" if EPOCH in table.columns else None
    if {EPOCH, BATCHES, BATCHES_TOTAL} <= set(table.columns):
        source = "batch_counter"
    if source and markers.epoch_source == "progress_bar":  # the rows are the bars themselves
        source = "progress_bar"
    agree = agreement(table, markers)
    notes: tuple[str, ...] = (agree,) if agree else ()
    marked = epochs_from_markers(table, markers)
    if marked is not None:
        table, source = marked, markers.epoch_source
    inner = per_epoch_counter(table, planned) if STEP in table.columns and not from_order else None
    if inner is not None:
        note = "the step counts within each epoch: global step = epoch x steps per epoch + step"
        return Placed(inner[0], "two_level", (*notes, note, describe_length(inner[1])), False, inner[1])
    if not from_order or LINE_NO not in table.columns:
        return Placed(table, source, notes, from_order)
    two = two_level_steps(table, markers.samples)
    if two is not None and two.height:
        note = "steps = (epoch - first epoch) x batches per epoch + batch (per-epoch counters)"
        return Placed(two, source, (*notes, note), False)
    table = number_runs(table, (*markers.run_headers, *markers.resume_lines))
    stride = given or order_stride(table, planned, markers.epochs_planned)
    bar = bar_steps(table, markers.bars) if stride is None else None
    stride = stride or (bar.stride if bar else None)
    if stride is None:
        return Placed(table, source, notes, True)
    note = (
        f"{GIVEN_NOTE} {stride}: the log prints no step, each row is {stride} optimizer steps"
        if given
        else f"the log prints no step: rows are every {stride} steps (the progress bar's count between rows)"
        if bar
        else f"the log prints no step: rows are every {stride} steps "
        f"(epoch progress per row x {planned} planned steps / {markers.epochs_planned} epochs)"
    )
    offset = resume_offsets(table, markers.resume_steps, markers.run_headers)
    if offset.any():
        note += "; rows after a resume line continue from the global step it names"
    return Placed(table.with_columns(pl.col(STEP) * stride + pl.Series(offset)), source, (*notes, note), False)
