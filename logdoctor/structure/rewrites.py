"""One step written twice by consecutive records (a bar's last position drawn again after a callback's
line) is one record whose later write wins: neither a resume nor another writer's step.

Keras 3 ``fit(verbose=1)`` draws its bar's last position (``477/477 ... loss: 0.2659``) when the last
batch ends, a callback prints its line (``Epoch 1: val_accuracy improved ...``), and the bar is
drawn at that position again with the epoch's final values (``477/477 ... loss: 0.2188 - val_loss:
...``; keras/src/utils/progbar.py ``update(current, values, finalize)``). Read as two records, the
second goes "back" by zero steps and the stretch after it reads as a resume (structure/resolve.py
rule 2) or, once per epoch, as interleaved writers.

The rule: a record whose step equals the step of the record just before it (file order; only lines
that are no rows between them) and that follows no restart marker (a parser's ``restart`` flag, a
run header such as ``***** Running training *****`` or a checkpoint load between the two) is the
same step written again.
Where the log is interleaved (resolve.py's test: short backward jumps outnumber long ones, or long
ones are many), a repeated step is another writer's, and only a repeat at a progress bar's last
position (``batches == batches_total``: the epoch's end, which one writer draws twice) is merged.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from logdoctor.model import BATCHES, BATCHES_TOTAL, LINE_NO, STEP

_GROUP = "_rewrite_of"


def _across_marker(t: pl.DataFrame, marks: tuple[int, ...]) -> pl.Series:
    """Per record, whether a marker line (a run header, a checkpoint load) lies between it and the
    record before it."""
    if not marks or LINE_NO not in t.columns or t.height == 0:
        return pl.Series([False] * t.height)
    at = np.searchsorted(np.sort(np.asarray(marks)), t[LINE_NO].fill_null(0).to_numpy(), side="right")
    return pl.Series(np.r_[False, at[1:] != at[:-1]])


def rewrites(
    t: pl.DataFrame, restart: pl.Series, interleaved: Callable[[], bool], marks: tuple[int, ...] = ()
) -> pl.Series:
    """Per record (file order), whether it writes the step of the record just before it again
    (``interleaved``: whether the log is, asked only when some step repeats; ``marks``: lines of
    restart markers, a repeat across one is no rewrite)."""
    again = t.select((pl.col(STEP) == pl.col(STEP).shift(1)).fill_null(False)).to_series()
    if not again.any():
        return again
    again = again & ~restart & ~_across_marker(t, marks)
    if not interleaved():
        return again
    if not {BATCHES, BATCHES_TOTAL} <= set(t.columns):
        return pl.Series([False] * t.height)
    at_end = t.select((pl.col(BATCHES) == pl.col(BATCHES_TOTAL)).fill_null(False)).to_series()
    return again & at_end


def merge_rewrites(
    t: pl.DataFrame, restart: pl.Series, interleaved: Callable[[], bool], marks: tuple[int, ...] = ()
) -> tuple[pl.DataFrame, pl.Series, int]:
    """(table, restart flags, records merged away): each step written again by the next record is
    one record; the later write wins each column it has, the earlier fills the columns it lacks
    (as rows of one step from two line shapes merge, ingest/parsers/samestep.py). The record
    stands at the later write's line and keeps the first write's restart flag."""
    again = rewrites(t, restart, interleaved, marks)
    n = int(again.sum())
    if n == 0:
        return t, restart, 0
    group = (~again).cast(pl.Int64).cum_sum().alias(_GROUP)
    values = [c for c in t.columns if c != LINE_NO]
    merged = (
        t.with_columns(group, restart.alias("_restart"))
        .group_by(_GROUP, maintain_order=True)
        .agg(
            *(pl.col(c).drop_nulls().last() for c in values),
            *([pl.col(LINE_NO).last()] if LINE_NO in t.columns else []),
            pl.col("_restart").first(),
        )
    )
    return merged.select(t.columns), merged["_restart"], n
