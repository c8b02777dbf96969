"""Column rules of run structure: cumulative counters to per-step values, degenerate columns."""

from __future__ import annotations

import re

import numpy as np
import polars as pl

from logdoctor.model import ACC, EPOCH, GRAD_NORM, LINE_NO, LOSS, SEQS, STEP, TOKENS

#: Columns checked for cumulative counting (TRL ``num_tokens``, Megatron consumed samples).
COUNTER_COLUMNS: tuple[str, ...] = (TOKENS, SEQS)
#: Columns that are broken when constant (not only when all zero).
CONSTANT_IS_BROKEN: tuple[str, ...] = (LOSS, ACC, GRAD_NORM)
#: Bookkeeping that names the run rather than measures it: Lightning's logger version ``v_num``,
#: which its progress bar prints on every drawing (constant through a run by design, so a constant
#: there is no broken logging). Never judged as a metric column.
BOOKKEEPING: frozenset[str] = frozenset({"v_num"})
_SKIP = (STEP, LINE_NO, EPOCH, *sorted(BOOKKEEPING))


def is_cumulative(step: np.ndarray, value: np.ndarray, *, min_rows: int = 4, tol: float = 0.1) -> bool:
    """True when ``value`` is a running total that grows in proportion to the step.

    A cumulative counter never decreases, rises at (nearly) every logged row, and equals its
    typical per-step increase ``c`` times the step: the median of ``|value / (c * step) - 1|`` is at
    most ``tol``. A per-batch count fails at least one test: it moves up and down, or is constant
    (packing), or, when batches are sorted by length, it ramps up from a non-zero start, so it is
    far from ``c * step`` early in the run.

    Args:
        step: step numbers, ascending.
        value: the column, same length (NaN for missing).
        min_rows: fewer finite rows than this are never called cumulative.
        tol: largest median relative deviation from ``c * step``.
    """
    ok = np.isfinite(value) & (step > 0)
    s, v = step[ok].astype(float), value[ok]
    if v.size < min_rows or v[-1] <= 0:
        return False
    d = np.diff(v)
    if (d < 0).any() or (d > 0).mean() < 0.9:
        return False
    ds = np.diff(s)
    rate = float(np.median(d[ds > 0] / ds[ds > 0])) if (ds > 0).any() else 0.0
    if rate <= 0:
        return False
    return bool(np.median(np.abs(v / (rate * s) - 1.0)) <= tol)


def decumulate(table: pl.DataFrame, notes: list[str]) -> pl.DataFrame:
    """Replace cumulative counter columns by their per-step increase; keep the raw column.

    The per-step value of a row is ``(total[i] - total[i-1]) / (step[i] - step[i-1])``: the mean per
    step over the logging interval (the first row uses ``total / step``). The running totals stay in
    ``<column>_cumulative``.
    """
    for col in COUNTER_COLUMNS:
        if col not in table.columns or table.height < 2:
            continue
        step = table[STEP].to_numpy()
        value = table[col].cast(pl.Float64).fill_null(float("nan")).to_numpy()
        if not is_cumulative(step, value):
            continue
        prev_v = pl.col(col).shift(1).fill_null(0.0)
        prev_s = pl.col(STEP).shift(1).fill_null(0)
        per_step = ((pl.col(col) - prev_v) / (pl.col(STEP) - prev_s).cast(pl.Float64)).alias(col)
        table = table.with_columns(pl.col(col).alias(f"{col}_cumulative")).with_columns(per_step)
        notes.append(
            f"{col}: the log holds a running total (never decreases, grows with the step); "
            f"converted to the mean per step of each logging interval; totals in {col}_cumulative"
        )
    return table


#: Running totals by name: ``cum. examples``, ``cumulative_tokens``, ``examples_seen``,
#: ``num_input_tokens_seen``, ``consumed_samples``, ``total_tokens``, ``global_step``: counters, never
#: metrics (their values grow with the run; they place rows, they do not measure training).
_COUNTED = (
    r"(?:examples|samples|sentences|sents|tokens|words|seqs|sequences|batches|images|frames|chars"
    r"|characters|bytes|updates|steps?|iters?|iterations)"
)
CUMULATIVE_NAME_RE = re.compile(
    rf"^(?:cum|cumul|cumulative|total|global|consumed|seen)_(?:\w+_)?{_COUNTED}$"
    rf"|^(?:num_)?(?:\w+_)?{_COUNTED}_(?:seen|cumulative|consumed|so_far)$",
    re.IGNORECASE,
)


def is_cumulative_name(column: str) -> bool:
    """True for a column whose name says it is a running total (``cum_examples``, ``tokens_seen``)."""
    return CUMULATIVE_NAME_RE.search(column) is not None


#: Columns that count failures (fp16 overflows, skipped or NaN iterations): 0 there is good news.
FAILURE_COUNTER_RE = re.compile(r"(skipped|overflow|nan_iter|inf_iter|fail|error)", re.IGNORECASE)


def is_failure_counter(column: str) -> bool:
    """True for a column that counts failures (``number_of_skipped_iterations``, ``overflow``)."""
    return FAILURE_COUNTER_RE.search(column) is not None


def degenerate_columns(table: pl.DataFrame, *, min_rows: int = 3) -> list[tuple[str, float]]:
    """Columns that carry no information: all zero, or constant where that means broken logging.

    Returns:
        (column, the constant value) pairs, in column order. ``lr`` or a packed ``tokens`` count
        that never changes is legitimate and not reported; a zero everywhere always is.
    """
    cols = [(c, d) for c, d in table.schema.items() if c not in _SKIP and d.is_numeric()]
    if not cols:
        return []
    # one query for every column (each polars query costs ~0.1-1 ms whatever the frame's size):
    # count, min and max of the values that are neither null nor NaN, in the column's own dtype
    exprs: list[pl.Expr] = []
    for i, (c, d) in enumerate(cols):
        x = pl.col(c).fill_nan(None) if d.is_float() else pl.col(c)
        exprs += [x.count().alias(f"n{i}"), x.min().alias(f"lo{i}"), x.max().alias(f"hi{i}")]
    row = table.select(exprs).row(0)
    out: list[tuple[str, float]] = []
    for i, (col, _) in enumerate(cols):
        n, lo, hi = row[3 * i : 3 * i + 3]
        if n < min_rows or lo != hi:
            continue
        value = float(lo)
        if value == 0.0 or col in CONSTANT_IS_BROKEN:
            out.append((col, value))
    return out
