"""The run's structure at a glance (RunStructure): rows, stride, plan, epochs, restarts, metrics.

Resolution rules:

- **stride**: the most common gap between consecutive steps when at least 90% of the gaps inside
  an epoch have it (``steps``), else None, and None when the log prints no step (unless ``--stride``
  gives it: ``given``); ``grad_accum`` only when the log
  states it.
- **rows**: the kept rows plus the rows of earlier runs appended to the same log (each run is
  counted; the analyses read the last one).
- **planned**: the planned total the log states (``step 254/5000``, a ``max_steps`` field, a
  ``Total optimization steps`` header); ``finished`` when the last step is within one stride of it.
- **epochs**: an epoch column wins (``column``), then epoch marker lines or progress bars, then a
  per-epoch batch counter; steps per epoch as build.py resolved them. Epochs covered: distinct
  integer epochs, or the fractional epoch reached rounded up (a partial last epoch counts); with
  no epoch column, the steps covered over steps per epoch.
- **metrics**: numeric training columns with a finite value in at least half the rows, except
  counters (step, epoch, batch counters, running totals, planned totals, failure counters such
  as Megatron's ``number of nan iterations``, consumed samples, clocks and progress) and running
  totals by name (``cum. examples``, ``tokens seen``: counters.is_cumulative_name).
"""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.base import RESTART
from logdoctor.model import BATCHES, BATCHES_TOTAL, EPOCH, LINE_NO, STEP, Restart, RunStructure
from logdoctor.structure.counters import BOOKKEEPING, is_cumulative_name

#: Columns that place a row (counters) or name the run (bookkeeping), never metrics.
_COUNTERS = frozenset({STEP, LINE_NO, EPOCH, BATCHES, BATCHES_TOTAL, RESTART}) | BOOKKEEPING
_COUNTER_SUFFIXES = ("_cumulative", "_total")
#: Share of gaps that must equal the stride for the logging to count as regular.
REGULAR = 0.9
#: Counters and clocks by name: failure counters (``number of nan iterations``), consumed
#: totals, wall-clock and remaining time, progress.
_COUNTER_NAMES = re.compile(
    r"^(?:number_of|num|n)_\w*(?:iterations|steps|skipped)|^consumed_|^(?:elapsed|remaining)(?:_time|_s)?$"
    r"|^time_elapsed$|^eta$|^percentage$|^samples$|^train_wall$|^wall$|^\w+_ep$|^train_speed"
)


def stride_of(step: np.ndarray, epoch: np.ndarray | None = None) -> int | None:
    """The logging interval: the most common positive gap between rows, when at least 90% of the
    gaps inside an epoch are that size (a gap across an epoch boundary may be shorter); None for
    irregular logging (Keras progress lines every 1-6 batches)."""
    gaps = np.diff(step)
    ok = gaps > 0
    if epoch is not None and epoch.size == step.size:
        inside = epoch[1:] == epoch[:-1]
        if (ok & inside).any():
            ok &= inside
    gaps = gaps[ok]
    if not gaps.size:
        return None
    values, counts = np.unique(gaps, return_counts=True)
    best = int(np.argmax(counts))
    return int(values[best]) if counts[best] >= REGULAR * gaps.size else None


def _contains(sorted_steps: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per value, True when it is one of ``sorted_steps`` (ascending)."""
    if not sorted_steps.size or not values.size:
        return np.zeros(values.size, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_steps, values), sorted_steps.size - 1)
    return np.asarray(sorted_steps[at] == values)


def metric_columns(table: pl.DataFrame) -> tuple[str, ...]:
    """Numeric columns that are metrics: finite in at least half the rows, not counters."""
    half = max(1, table.height // 2)
    at = [
        i
        for i, (col, dtype) in enumerate(table.schema.items())
        if not (col in _COUNTERS or col.endswith(_COUNTER_SUFFIXES) or not dtype.is_numeric())
        and not (_COUNTER_NAMES.search(col) or is_cumulative_name(col))
    ]
    if not at:
        return ()
    # the finite rows of every candidate in one query (each polars query costs ~0.1 ms on a small
    # log); by position, so that no column name is read as a pattern
    finite = table.select(pl.nth(i).cast(pl.Float64).is_finite().sum() for i in at).row(0)
    cols = [table.columns[i] for i in at]
    out = [col for col, n in zip(cols, finite, strict=True) if int(n) >= half or col == "loss"]
    return tuple(sorted(out))


def eval_columns(evals: pl.DataFrame) -> tuple[str, ...]:
    """Numeric eval series with at least one value."""
    out = []
    for col, dtype in evals.schema.items():
        if col in _COUNTERS or not dtype.is_numeric():
            continue
        if evals[col].drop_nulls().len():
            out.append(col)
    return tuple(sorted(out))


def _epochs(table: pl.DataFrame) -> np.ndarray | None:
    """The integer epoch of each row, when the table has an integer epoch column."""
    if EPOCH not in table.columns:
        return None
    ep = table[EPOCH].cast(pl.Float64).to_numpy()
    return ep if np.all(np.isfinite(ep) & (ep == np.floor(ep))) else None


def epochs_covered(table: pl.DataFrame, spe: float | None) -> int | None:
    """Epochs the rows cover (a partial last epoch counts)."""
    if EPOCH in table.columns:
        ep = table[EPOCH].cast(pl.Float64).drop_nulls().drop_nans().to_numpy()
        if ep.size:
            if np.all(ep == np.floor(ep)):
                return int(ep.max() - ep.min() + 1)
            return max(1, math.ceil(float(ep.max()) - 1e-9))
    if "batches" in table.columns and table["batches"].null_count() == 0 and table.height:
        # a position-in-epoch counter beside the step (Coqui ``STEP: i/N``): each reset starts an epoch
        pos = table["batches"].cast(pl.Float64).to_numpy()
        return int((np.diff(pos) < 0).sum()) + 1
    if spe and table.height:
        first, last = int(table[STEP][0]), int(table[STEP][-1])
        return max(1, math.ceil((last - min(first, 1) + 1) / spe - 1e-9))
    return None


def describe(
    table: pl.DataFrame,
    evals: pl.DataFrame,
    *,
    planned: int | None,
    planned_source: str | None,
    spe: float | None,
    epoch_source: str | None,
    restarts: tuple[Restart, ...],
    spe_source: str | None = None,
    duplicates: int,
    grad_accum: int | None = None,
    earlier_rows: int = 0,
    numbered: bool = False,
    all_rows: pl.DataFrame | None = None,
    lossless: tuple[int, ...] = (),
    stride_given: int | None = None,
) -> RunStructure:
    """The RunStructure of a resolved table (sorted by step, unique steps).

    Args:
        earlier_rows: rows of earlier runs appended to the same log (counted in ``rows``).
        numbered: the steps are only row numbers (the log prints none): no stride is known.
        all_rows: every row in file order; with appended runs the stride is read over all of
            them (each run's gaps), not only the last run's.
        lossless: steps of step records without a loss: rows too (not in the table).
        stride_given: the user's ``--stride`` when it placed the rows (stride_source ``given``).
    """
    step = table[STEP].to_numpy() if table.height else np.zeros(0, dtype=np.int64)
    # lossless steps are few: test them against the sorted steps instead of np.setdiff1d's sort
    # of every step (0.37 s at 1M rows)
    given = np.unique(np.asarray(lossless, dtype=np.int64))
    extra = given[~_contains(step, given)]
    every = np.concatenate((step, extra))
    first = int(every.min()) if every.size else None
    last = int(every.max()) if every.size else None
    rows = all_rows if earlier_rows and all_rows is not None else table
    stride = None if numbered or not rows.height else stride_of(rows[STEP].to_numpy(), _epochs(rows))
    stride = stride_given or stride
    finished = None
    if planned and last is not None:
        finished = last >= planned - (stride or 1)
    return RunStructure(
        rows=table.height + earlier_rows + int(extra.size),
        first_step=first,
        last_step=last,
        stride=stride,
        stride_source=("given" if stride_given else "steps") if stride else None,
        grad_accum=grad_accum,
        planned=planned,
        planned_source=planned_source if planned else None,
        finished=finished,
        epochs=epochs_covered(table, spe),
        steps_per_epoch=float(spe) if spe else None,
        epoch_source=epoch_source if spe or EPOCH in table.columns else None,
        steps_per_epoch_source=spe_source if spe else None,
        restarts=restarts,
        metrics=metric_columns(table),
        eval_metrics=eval_columns(evals),
        duplicates=duplicates,
    )
