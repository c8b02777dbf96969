"""A log whose every step line was skipped: no loss anywhere, each line counting its own skip.

Megatron prints no ``lm loss`` for an iteration whose update it skipped (fp16 overflow), only its
loss scale and ``number of skipped iterations``. A log in which every step line is such a line has
no training row, yet it says plainly what happened: no update was ever applied. Those lines become
the run's rows, with a missing loss (never a NaN: no loss was computed and none is claimed), so that
the skip counter is judged (detectors/mixedprecision.py) instead of the file being refused.
"""

from __future__ import annotations

import re

import polars as pl

from logdoctor.model import LOSS, STEP

#: A column counting skipped updates (Megatron ``number_of_skipped_iterations``, ``skipped``).
_SKIPPED = re.compile(r"skipped", re.IGNORECASE)

#: What the report says about rows read this way.
NOTE = (
    "no step line carries a loss and every one counts a skipped update (`{column}`): each is read as a "
    "row with no loss, so that the skipped updates are judged"
)


def skip_column(rows: pl.DataFrame) -> str | None:
    """The column of ``rows`` that counts skipped updates, when it is present on every row and
    above 0 on each (every step line skipped its update); None otherwise."""
    for c in rows.columns:
        if not _SKIPPED.search(c) or not rows.schema[c].is_numeric():
            continue
        v = rows[c].cast(pl.Float64, strict=False)
        if v.null_count() == 0 and v.is_nan().sum() == 0 and bool((v > 0).all()):
            return c
    return None


def all_skipped_rows(rows: pl.DataFrame) -> tuple[pl.DataFrame, str] | None:
    """(the step lines as rows with a null loss, the note) when every step line of ``rows``
    (records without a loss) skipped its update; None otherwise."""
    if rows.height == 0 or STEP not in rows.columns:
        return None
    stepped = rows.filter(pl.col(STEP).is_not_null()).unique(STEP, keep="last", maintain_order=True).sort(STEP)
    column = skip_column(stepped) if stepped.height else None
    if column is None:
        return None
    return stepped.with_columns(pl.lit(None, dtype=pl.Float64).alias(LOSS)), NOTE.format(column=column)
