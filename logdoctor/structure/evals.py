"""The evaluation table: every eval row gets a step (its own, else the training step logged just before it)."""

from __future__ import annotations

import polars as pl

from logdoctor.model import LINE_NO, STEP

#: An eval's own step below this share of the training step logged just before it is no step on
#: the training axis (``validation: iter 3`` counts validations, written after step 21000).
BEHIND = 0.5


def _counts_evals(evals: pl.DataFrame, table: pl.DataFrame) -> bool:
    """Whether most evals' own "steps" lag far behind the training rows written before them:
    their counter counts something else (validations), so each takes its training row's step."""
    lines = table.select(pl.col(LINE_NO).cast(pl.Int64), pl.col(STEP).alias("_prev")).sort(LINE_NO)
    own = evals.filter(pl.col(STEP).is_not_null()).join_asof(lines, on=LINE_NO, strategy="backward")
    own = own.filter(pl.col("_prev").is_not_null() & (pl.col("_prev") > 0))
    if own.height == 0:
        return False
    behind = own.select((pl.col(STEP) < BEHIND * pl.col("_prev")).mean()).item()
    return bool(behind > 0.5)


def place_evals(evals: pl.DataFrame, table: pl.DataFrame) -> pl.DataFrame:
    """``evals`` with ``step`` an Int64 column and rows sorted by line.

    An eval row without a step (Keras' end-of-epoch line, PyTorch's ``| end of epoch |`` block)
    takes the step of the last training row written before it in the log (by ``line_no``); rows
    before any training row keep a null step. Rows carrying no metric at all are dropped. When
    most evals' own steps lag far behind the training rows before them (``_counts_evals``), every
    eval takes its training row's step instead.
    """
    if evals.height == 0 or LINE_NO not in evals.columns:
        return evals
    metrics = [c for c in evals.columns if c not in (STEP, LINE_NO)]
    if not metrics:
        return pl.DataFrame()
    out = evals.filter(pl.any_horizontal([pl.col(c).is_not_null() for c in metrics]))
    if STEP not in out.columns:
        out = out.with_columns(pl.lit(None, dtype=pl.Int64).alias(STEP))
    out = out.with_columns(pl.col(STEP).cast(pl.Int64, strict=False), pl.col(LINE_NO).cast(pl.Int64))
    out = out.sort(LINE_NO)
    if LINE_NO in table.columns and table.height and _counts_evals(out, table):
        out = out.with_columns(pl.lit(None, dtype=pl.Int64).alias(STEP))
    if out[STEP].null_count() and LINE_NO in table.columns and table.height:
        lines = table.select(pl.col(LINE_NO).cast(pl.Int64), pl.col(STEP).alias("_prev")).sort(LINE_NO)
        out = out.join_asof(lines, on=LINE_NO, strategy="backward")
        out = out.with_columns(pl.coalesce(STEP, "_prev").alias(STEP)).drop("_prev")
    return out.select(STEP, LINE_NO, *metrics)
