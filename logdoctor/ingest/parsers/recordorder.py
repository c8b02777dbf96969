"""Step numbers for a log that prints none: record order, from 1 again for each fresh run."""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor.model import EPOCH, STEP


def fresh_runs(epoch: np.ndarray) -> np.ndarray:
    """Rows where the epoch goes back to the log's first epoch (or below) after rising above it:
    a fresh run written to the same file (NoProp's ``Epoch 001`` again under a new heading,
    simple-nmt's ``Epoch 1 -`` for the next model). A mid-run fall (a resume) is not one."""
    if epoch.size < 2 or np.isnan(epoch[0]):
        return np.zeros(epoch.size, dtype=bool)
    prev = np.concatenate(([epoch[0]], epoch[:-1]))
    with np.errstate(invalid="ignore"):
        fresh = (epoch <= epoch[0]) & (prev > epoch[0])
    fresh[0] = False
    return np.asarray(fresh, dtype=bool)


def number_by_order(table: pl.DataFrame) -> pl.DataFrame:
    """``table`` (rows in line order, no step) with a ``step`` column first: 1, 2, ... in record
    order, starting again at 1 on each fresh run (:func:`fresh_runs`), so that the structure
    stage sees the counter go back to where the log began and splits the runs, as it does for a
    log that prints its steps. Without an epoch column every row is one run."""
    n = table.height
    order = np.arange(n, dtype=np.int64)
    if EPOCH in table.columns and n:
        fresh = fresh_runs(table[EPOCH].cast(pl.Float64).fill_null(np.nan).to_numpy())
        starts = np.maximum.accumulate(np.where(fresh, order, 0))
        order = order - starts
    return table.insert_column(0, pl.Series(STEP, order + 1))
