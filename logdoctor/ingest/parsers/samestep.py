"""One iteration printed by two line shapes (DeepSpeed `steps: N loss:`, Megatron `iteration N/ T |`) is one record."""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor.model import LINE_NO, STEP

#: Column that tags each row with the line shape it was read from (dropped by ``merge_shapes``).
SHAPE = "_line_shape"


def tag_shapes(frames: list[pl.DataFrame]) -> list[pl.DataFrame]:
    """Each frame (one line shape's rows) tagged in ``SHAPE`` with the fields its lines carry:
    templates that print the same fields (``loss=2.5`` and ``loss=1,234.5``, an extra blank) are
    one shape, whose repeated step is a repeated write for structure/ to judge, not two halves of
    one record (and the text fast path, which reads one template, reads such logs the same way)."""
    ids: dict[tuple[str, ...], int] = {}
    return [
        f.with_columns(pl.lit(ids.setdefault(tuple(sorted(f.columns)), len(ids)), dtype=pl.Int32).alias(SHAPE))
        for f in frames
    ]


def _groups(step: np.ndarray, shape: np.ndarray) -> np.ndarray:
    """Record id per row (rows in file order): a row joins the record above it when it carries
    the same step from another line shape and that shape is not yet in the record."""
    n = step.size
    new = np.ones(n, dtype=bool)
    if n < 2:
        return np.cumsum(new) - 1
    same = (step[1:] == step[:-1]) & (shape[1:] != shape[:-1])
    new[1:] = ~same
    gid = np.cumsum(new) - 1
    # a shape seen twice in one record (A B A at one step) is a repeated write: split there
    for g in np.flatnonzero(np.bincount(gid) > 2):  # rare: records of 3+ rows
        rows = np.flatnonzero(gid == g)
        seen: set[int] = set()
        for r in rows:
            if int(shape[r]) in seen:
                new[r] = True
                seen = set()
            seen.add(int(shape[r]))
        gid = np.cumsum(new) - 1
    return gid


def merge_shapes(table: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Merge adjacent rows (file order) that carry the same step from different line shapes.

    The row with the most values wins each column it has; the other fills the columns it lacks.
    The record keeps the line of its first row. A step repeated by the *same* shape is left
    alone (a duplicate write or a resume: structure/ decides). Returns (table, rows merged away).
    """
    if SHAPE not in table.columns:
        return table, 0
    if table.height < 2 or table[SHAPE].n_unique() < 2 or table[STEP].null_count():
        return table.drop(SHAPE), 0
    t = table.sort(LINE_NO, maintain_order=True)
    gid = _groups(t[STEP].to_numpy(), t[SHAPE].to_numpy())
    merged = t.height - int(gid[-1]) - 1
    if merged == 0:
        return t.drop(SHAPE), 0
    values = [c for c in t.columns if c not in (LINE_NO, SHAPE)]
    filled = pl.sum_horizontal([pl.col(c).is_not_null() for c in values])
    t = t.with_columns(pl.Series("_rec", gid), filled.alias("_n"))
    t = t.sort(["_rec", "_n"], descending=[False, True], maintain_order=True)
    out = t.group_by("_rec", maintain_order=True).agg(
        pl.col(LINE_NO).min(), *(pl.col(c).drop_nulls().first() for c in values)
    )
    return out.sort(LINE_NO).select(t.drop("_rec", "_n", SHAPE).columns), merged
