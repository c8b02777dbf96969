"""Whether a run's last row left its epoch unfinished, from the row's position in the epoch."""

from __future__ import annotations

import polars as pl

from logdoctor.model import BATCHES, BATCHES_TOTAL, LINE_NO

#: The per-epoch counter and its total of two-level step lines (``Epoch [24][4700/7330]``,
#: ``Epoch: [3][ 50/295]``; ingest/parsers/textplan.py).


def unfinished_epoch(rows: pl.DataFrame) -> bool:
    """True when the last row (file order) sits more than one logging interval before its epoch's
    end: ``[4700/7330]`` logged every 50 iterations is 2,630 short, so that epoch was not completed.

    The interval is the most common positive step of the counter between rows. False when the rows
    carry no counter with its total, or the last row is within one interval of the end (a logger
    that prints every 50 iterations never prints 7330/7330).
    """
    if BATCHES not in rows.columns or BATCHES_TOTAL not in rows.columns or rows.height < 2:
        return False
    order = rows.sort(LINE_NO) if LINE_NO in rows.columns else rows
    pos = order.select(pl.col(BATCHES).cast(pl.Float64), pl.col(BATCHES_TOTAL).cast(pl.Float64)).drop_nulls()
    if pos.height < 2:
        return False
    gaps = pos[BATCHES].diff().drop_nulls()
    gaps = gaps.filter(gaps > 0)
    if gaps.len() == 0:
        return False
    interval = float(gaps.mode().max())  # type: ignore[arg-type]
    last, total = float(pos[BATCHES][-1]), float(pos[BATCHES_TOTAL][-1])
    return total - last > interval
