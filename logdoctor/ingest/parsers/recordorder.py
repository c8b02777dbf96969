"""Step numbers for a log that prints none: its epoch when it logs one record per epoch, else
record order, from 1 again for each fresh run."""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.base import COUNTER_BACK, RESTART
from logdoctor.model import EPOCH, STEP


def fresh_runs(epoch: np.ndarray) -> np.ndarray:
    """Rows where the epoch goes back to the log's first epoch (or below) after rising above it:
    a fresh run written to the same file (NoProp's ``Epoch 001`` again under a new heading,
    simple-nmt's ``Epoch 1 -`` for the next model). A mid-run fall (a resume) is not one, nor is
    a fall of a fractional epoch (HF's progress ``0.35``: a resumed stream restarts it too)."""
    seen = epoch[np.isfinite(epoch)]
    if epoch.size < 2 or np.isnan(epoch[0]) or (seen != np.floor(seen)).any():
        return np.zeros(epoch.size, dtype=bool)
    prev = np.concatenate(([epoch[0]], epoch[:-1]))
    with np.errstate(invalid="ignore"):
        fresh = (epoch <= epoch[0]) & (prev > epoch[0])
    fresh[0] = False
    return np.asarray(fresh, dtype=bool)


def one_per_epoch(epoch: np.ndarray) -> bool:
    """True when every record holds a whole epoch number and most stretches of one epoch number
    are a single record: the epoch is the log's only counter (``Epoch 001 loss ...``, simple-nmt's
    ``Epoch 3 -``), and an epoch written again right after itself is a rerun from its checkpoint.
    A log of several records per epoch has stretches of several records (median 2 or more)."""
    if epoch.size < 2 or not np.isfinite(epoch).all() or (epoch != np.floor(epoch)).any():
        return False
    starts = np.flatnonzero(np.r_[True, np.diff(epoch) != 0])
    stretches = np.diff(np.r_[starts, epoch.size])
    return bool(np.median(stretches) == 1)


def epoch_records(table: pl.DataFrame) -> bool:
    """True when ``table`` (records without a step, in line order) holds at least two records and
    each is the next epoch of a counter that starts at 0 or 1: a per-epoch log of a run that ended
    after a few epochs (SpeechBrain's ``train_log.txt`` of a run that crashed in its third), too
    short for record order alone to say that its loss lines are a run. A stray ``loss`` in a
    config dump holds no such counter."""
    if EPOCH not in table.columns or table.height < 2:
        return False
    epoch = table[EPOCH].cast(pl.Float64, strict=False).fill_null(np.nan).to_numpy()
    return bool(epoch[0] in (0.0, 1.0) and (np.diff(epoch) == 1).all())


#: The notes that say how the rows were numbered.
BY_EPOCH = "the log prints no step numbers: each record is one epoch, numbered by its epoch"
BY_ORDER = "the log prints no step numbers: steps are numbered by record order"


def number_by_order(table: pl.DataFrame) -> tuple[pl.DataFrame, str]:
    """``table`` (rows in line order, no step) with a ``step`` column first, and the note that
    says how it was numbered.

    One record per epoch (:func:`one_per_epoch`): the step is the epoch, so that a run continued
    from an earlier epoch's checkpoint is a resume whose later writes win and a fresh run (back
    to the first epoch) is an appended run, as for a log that prints its steps. Otherwise 1, 2,
    ... in record order, from 1 again on each fresh run (:func:`fresh_runs`); without an epoch
    column every row is one run."""
    n = table.height
    order = np.arange(n, dtype=np.int64)
    if EPOCH in table.columns and n:
        epoch = table[EPOCH].cast(pl.Float64).fill_null(np.nan).to_numpy()
        if one_per_epoch(epoch):
            # every epoch that does not follow the one before is a restart of the run, however
            # short the stretch it starts (a one-epoch rerun): never another writer's lines
            back = np.where(np.r_[False, np.diff(epoch) <= 0], COUNTER_BACK, 0.0)
            table = table.with_columns(pl.Series(RESTART, back)) if back.any() else table
            return table.insert_column(0, pl.Series(STEP, epoch.astype(np.int64))), BY_EPOCH
        starts = np.maximum.accumulate(np.where(fresh_runs(epoch), order, 0))
        order = order - starts
    return table.insert_column(0, pl.Series(STEP, order + 1)), BY_ORDER


def continue_order(table: pl.DataFrame, last: int) -> pl.DataFrame:
    """A later chunk's rows numbered 1, 2, ... in record order (``number_by_order``) continued from
    ``last``, the step of the record before the chunk: its rows up to the first fresh run (where
    the numbering starts again) follow on; a fresh run keeps its own numbers."""
    if last <= 0 or table.height == 0:
        return table
    steps = table[STEP].to_numpy().copy()
    again = np.flatnonzero(steps[1:] <= steps[:-1]) + 1
    end = int(again[0]) if again.size else steps.size
    steps[:end] += last
    return table.with_columns(pl.Series(STEP, steps))
