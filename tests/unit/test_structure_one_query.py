"""build_run's per-column checks as one polars query give the answers of the per-column reads (issue 33 point 3)."""

from __future__ import annotations

import math

import polars as pl

from logdoctor.structure import layout


def _per_column(table: pl.DataFrame) -> tuple[str, ...]:
    """``metric_columns`` as it was: one cast and one count per column (by exact name)."""
    half = max(1, table.height // 2)
    out = []
    for col, dtype in table.schema.items():
        if col in layout._COUNTERS or col.endswith(layout._COUNTER_SUFFIXES) or not dtype.is_numeric():
            continue
        if layout._COUNTER_NAMES.search(col) or layout.is_cumulative_name(col):
            continue
        if int(table.get_column(col).cast(pl.Float64).is_finite().sum()) >= half or col == "loss":
            out.append(col)
    return tuple(sorted(out))


def _table(rows: int, patterns: bool = False) -> pl.DataFrame:
    nan, inf = math.nan, math.inf
    base = {
        "step": list(range(rows)),
        "loss": [nan] * rows,  # never finite, kept: the loss always is
        "acc": [0.5 if i % 3 else None for i in range(rows)],  # two thirds finite
        "lr": [inf if i % 2 else 1e-3 for i in range(rows)],  # half finite: kept (>= half)
        "grad_norm": [nan if i % 4 else 1.0 for i in range(rows)],  # a quarter: left out
        "*": [1.0] * rows,  # names a pattern would read otherwise
        "^a.*$": [None] * rows,
        "tokens_seen": list(range(rows)),  # a counter
        "note": ["x"] * rows,  # not numeric
        "flag": [True] * rows,
    }
    f, i = pl.Float64, pl.Int64
    types = {
        "step": i,
        "loss": f,
        "acc": f,
        "lr": f,
        "grad_norm": f,
        "*": f,
        "^a.*$": f,
        "tokens_seen": i,
        "note": pl.String,
        "flag": pl.Boolean,
    }
    if not patterns:  # polars' own Series methods read a column named "*" as every column
        del base["*"], base["^a.*$"], types["*"], types["^a.*$"]
    return pl.DataFrame(base, schema=types)


def test_metric_columns_in_one_query_equal_the_per_column_reads() -> None:
    for rows in (0, 1, 2, 7, 40):
        t = _table(rows)
        assert layout.metric_columns(t) == _per_column(t), rows
    assert layout.metric_columns(_table(40)) == ("acc", "loss", "lr")


def test_metric_columns_named_like_patterns_are_read_by_position() -> None:
    """A column named ``*`` or ``^a.*$`` is that column, not every column or a regex."""
    assert layout.metric_columns(_table(40, patterns=True)) == ("*", "acc", "loss", "lr")


def test_metric_columns_of_a_table_without_numbers() -> None:
    assert layout.metric_columns(pl.DataFrame({"note": ["a", "b"]})) == ()
