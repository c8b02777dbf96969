"""fp16 overflow lines (DeepSpeed, fairseq, apex): each a skipped optimizer step, with its loss scale."""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.lines import LINE, LINE_NO
from logdoctor.ingest.parsers.screen import Lines

#: Columns added to the step table (null on rows without an overflow, except SKIPS which is 0).
#: No name matches structure.counters' failure-counter pattern: these columns are never "0 = good news".
SKIPS = "fp16_skips"
TRIED = "fp16_scale_tried"
CUT = "fp16_scale_cut"
REGROWN = "fp16_regrown"
SCALERS = "fp16_scalers"
COLUMNS = (SKIPS, TRIED, CUT, REGROWN, SCALERS)
_NUM = r"([0-9][0-9.]*(?:[eE][+-]?\d+)?)"
#: DeepSpeed ``[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to
#: 32768`` (or ``..., but hysteresis is 2. Reducing hysteresis to 1``: skipped, scale kept), and the
#: older ``fp16 dynamic loss scale overflow! Skipping step. Attempted loss scale: A, reducing to B``.
_DEEPSPEED = rf"(?i)overflow!.{{0,60}}?skipping step\.?\s*attempted loss scale:\s*{_NUM}(?:,\s*reducing to\s*{_NUM})?"
#: fairseq ``NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 64.0``.
_FAIRSEQ = rf"(?i)gradient overflow detected.{{0,60}}?setting loss scale to:?\s*{_NUM}"
#: apex amp ``Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0``.
_APEX = rf"(?i)gradient overflow\.\s+skipping step.{{0,60}}?reducing loss scale to\s*{_NUM}"
#: fairseq and apex print only the new scale; both cut by their default factor 2.
SCALE_FACTOR = 2.0


def scan_overflows(frame: pl.DataFrame) -> pl.DataFrame:
    """Overflow lines of ``frame`` (line_no, line) as (line_no, tried, cut) Float64 scales, in line order."""
    schema = {LINE_NO: pl.Int64, "tried": pl.Float64, "cut": pl.Float64}
    if frame.height == 0 or not Lines.of(frame[LINE]).may_match("(?i)overflow"):
        return pl.DataFrame(schema=schema)
    hits = frame.filter(pl.col(LINE).str.contains("(?i)overflow"))
    if hits.height == 0:
        return pl.DataFrame(schema=schema)
    line = pl.col(LINE)
    ds_tried = line.str.extract(_DEEPSPEED, 1).cast(pl.Float64, strict=False)
    ds_cut = line.str.extract(_DEEPSPEED, 2).cast(pl.Float64, strict=False)
    other = pl.coalesce(line.str.extract(_FAIRSEQ, 1), line.str.extract(_APEX, 1)).cast(pl.Float64, strict=False)
    out = hits.select(
        pl.col(LINE_NO).cast(pl.Int64),
        pl.coalesce(ds_tried, other * SCALE_FACTOR).alias("tried"),
        pl.coalesce(ds_cut, ds_tried, other).alias("cut"),
    )
    return out.filter(pl.col("tried").is_not_null()).sort(LINE_NO)


def track_scalers(tried: np.ndarray, cut: np.ndarray, row: np.ndarray) -> tuple[np.ndarray, int]:
    """Which overflows came after their scaler's scale had grown back, and how many scalers there are.

    Several engines may each keep a loss scale (DeepSpeed-Chat's actor and critic). The scalers are
    the overflows of the first overflowing row at the first scale tried. An overflow continues its
    scaler's calibration when it tries exactly the scale that scaler was last cut to (no scaler
    skips a step twice in one row); an overflow at a scale no scaler sits at means the scale had
    grown back after a run of clean steps (dynamic scaling grows it after a window without overflow).

    Returns:
        (regrown flag per overflow, number of scalers).
    """
    first = row == row[0]
    n_scalers = max(1, int(np.sum(first & (tried == tried[0]))))
    scales = [float(tried[0])] * n_scalers
    regrown = np.zeros(tried.size, dtype=bool)
    used: set[int] = set()
    for i in range(tried.size):
        if i and row[i] != row[i - 1]:
            used = set()
        free = [j for j in range(n_scalers) if j not in used] or list(range(n_scalers))
        match = [j for j in free if scales[j] == tried[i]]
        if match:
            j = match[0]
        else:
            regrown[i] = True
            below = [j for j in free if scales[j] < tried[i]]
            j = max(below, key=lambda k: scales[k]) if below else free[0]
        scales[j] = float(cut[i])
        used.add(j)
    return regrown, n_scalers


def attach_overflows(table: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """``table`` with the overflow columns: each overflow line belongs to the next step row written after it.

    DeepSpeed and fairseq print the overflow while the step runs, before that step's metric line.
    Overflows after the last step row belong to the last row. Nothing is added without overflows.
    """
    if events.height == 0 or table.height == 0 or LINE_NO not in table.columns:
        return table
    order = np.argsort(table[LINE_NO].to_numpy(), kind="stable")
    lines = table[LINE_NO].to_numpy()[order]
    at = np.minimum(np.searchsorted(lines, events[LINE_NO].to_numpy(), side="left"), lines.size - 1)
    row = order[at]
    tried, cut = events["tried"].to_numpy(), events["cut"].to_numpy()
    regrown, n_scalers = track_scalers(tried, cut, at)
    skips = np.bincount(row, minlength=table.height).astype(float)
    hit = skips > 0
    grown = np.bincount(row, weights=regrown.astype(float), minlength=table.height)
    cols = {
        SKIPS: skips,
        TRIED: _per_row(row, tried, table.height, np.fmax),
        CUT: _per_row(row, cut, table.height, np.fmin),
        REGROWN: np.where(grown > 0, grown, np.nan),  # null, not 0: an all-zero column reads as broken
        SCALERS: np.where(hit, float(n_scalers), np.nan),
    }
    out = table.with_columns(pl.Series(k, v, dtype=pl.Float64) for k, v in cols.items())
    return out.with_columns(pl.col(c).fill_nan(None) for c in COLUMNS if c != SKIPS)


def _per_row(row: np.ndarray, values: np.ndarray, n: int, op: np.ufunc) -> np.ndarray:
    out = np.full(n, np.nan)
    op.at(out, row, values)
    return out


#: DeepSpeed's engine line every ``steps_per_print`` steps: ``step=10, skipped=4, lr=[...]``
#: (deepspeed/runtime/engine.py, ``_report_progress``): the optimizer steps taken so far and how many
#: of them were skipped (fp16 overflow), both running totals; one line per engine (DeepSpeed-Chat's
#: actor and critic print one each).
SKIP_COUNTER = r"\bstep=(\d+), skipped=(\d+)\b"
#: Columns added from the counter lines: the steps skipped since the engine's previous line, summed over
#: the engines, and the steps those lines cover (the step's increase times the engines).
SKIPPED_STEPS, SKIP_SPAN = "skipped_steps", "skipped_steps_span"


def scan_skip_counters(frame: pl.DataFrame) -> pl.DataFrame:
    """DeepSpeed's ``step=K, skipped=S`` lines of ``frame`` as (line_no, step, skipped, engine), line
    order; ``engine`` numbers the lines that repeat a step one after the other."""
    schema = {LINE_NO: pl.Int64, "step": pl.Int64, "skipped": pl.Int64, "engine": pl.Int64}
    if frame.height == 0 or not Lines.of(frame[LINE]).may_match(SKIP_COUNTER):
        return pl.DataFrame(schema=schema)
    line = pl.col(LINE)
    got = (
        frame.select(
            pl.col(LINE_NO).cast(pl.Int64),
            line.str.extract(SKIP_COUNTER, 1).cast(pl.Int64, strict=False).alias("step"),
            line.str.extract(SKIP_COUNTER, 2).cast(pl.Int64, strict=False).alias("skipped"),
        )
        .drop_nulls()
        .sort(LINE_NO)
    )
    if got.height == 0:
        return pl.DataFrame(schema=schema)
    run = (pl.col("step") != pl.col("step").shift(1)).fill_null(True).cum_sum()
    return got.with_columns((pl.int_range(pl.len()).over(run)).cast(pl.Int64).alias("engine"))


def attach_skip_counters(table: pl.DataFrame, counters: pl.DataFrame, by_line: bool = False) -> pl.DataFrame:
    """``table`` with ``skipped_steps`` and ``skipped_steps_span``: each counter line's increase
    since its engine's previous line goes to the first row at or after its step (the last row when
    none is; ``by_line``: the last row written above the line, for rows whose step is their record
    number); rows without a counter line are null. Nothing is added without counter lines."""
    if counters.height == 0 or table.height == 0 or "step" not in table.columns:
        return table
    c = counters.sort("engine", LINE_NO).with_columns(
        (pl.col("skipped") - pl.col("skipped").shift(1).over("engine").fill_null(0)).alias("d_skip"),
        (pl.col("step") - pl.col("step").shift(1).over("engine").fill_null(0)).alias("d_step"),
    )
    if by_line and LINE_NO in table.columns:
        # rows numbered by record order count records, not the engine's optimizer steps: each counter
        # line belongs to the last row written above it (the interval it closes), the first row if none
        lines = table[LINE_NO].to_numpy()
        order = np.argsort(lines, kind="stable")
        at = np.maximum(np.searchsorted(lines[order], c[LINE_NO].to_numpy(), side="left") - 1, 0)
    else:
        steps = table["step"].to_numpy()
        order = np.argsort(steps, kind="stable")
        at = np.minimum(np.searchsorted(steps[order], c["step"].to_numpy(), side="left"), steps.size - 1)
    row = order[at]
    skipped = np.full(table.height, np.nan)
    span = np.full(table.height, np.nan)
    skipped[row] = 0.0  # a row with a counter line counts from 0
    span[row] = 0.0
    np.add.at(skipped, row, c["d_skip"].to_numpy().astype(float))
    np.add.at(span, row, c["d_step"].to_numpy().astype(float))
    return table.with_columns(
        pl.Series(SKIPPED_STEPS, skipped).fill_nan(None), pl.Series(SKIP_SPAN, span).fill_nan(None)
    )
