"""Resolve run structure from a ParseResult: resumes, duplicate steps, epochs -> a valid Run."""

from __future__ import annotations

import polars as pl

from logdoctor.model import EPOCH, LINE_NO, STEP, Run, RunMeta, validate_run
from logdoctor.parsers.base import ParseResult


def build_run(result: ParseResult, name: str, fmt: str, steps_per_epoch: int | None = None) -> Run:
    """Turn a parser's raw rows into a Run: the later write of a step wins (a resume rewrites
    earlier steps), steps sorted, resumes counted, steps per epoch recorded.
    """
    table = result.table.sort(LINE_NO)
    step = table[STEP]
    backwards = int((step.diff() < 0).sum()) if table.height > 1 else 0
    deduped = table.unique(subset=[STEP], keep="last", maintain_order=True).sort(STEP)
    overwritten = table.height - deduped.height
    spe = steps_per_epoch or result.steps_per_epoch or _infer_steps_per_epoch(deduped)
    meta = RunMeta(
        path=name,
        format=fmt,
        lines_read=result.lines_read,
        lines_skipped=result.lines_skipped,
        skip_reasons=dict(result.skip_reasons),
        total_steps=result.total_steps,
        steps_per_epoch=spe,
        resumes=backwards,
        overwritten_steps=overwritten,
        aliases=dict(result.aliases),
        notes=result.notes,
    )
    return Run(table=validate_run(deduped), meta=meta, evals=result.evals)


def _infer_steps_per_epoch(table: pl.DataFrame) -> int | None:
    """Median number of steps between integer epoch changes, when an epoch column exists."""
    if EPOCH not in table.columns or table[EPOCH].null_count() == table.height:
        return None
    ep = table.select(STEP, pl.col(EPOCH).floor().alias("e")).drop_nulls()
    starts = ep.filter(pl.col("e").diff() > 0)[STEP]
    if starts.len() < 2:
        return None
    return int(starts.diff().drop_nulls().median())  # type: ignore[arg-type]
