"""Columns read once per table (structure/columns.py) give what a polars query per use gave."""

from __future__ import annotations

import gc

import numpy as np
import polars as pl
import pytest

from logdoctor.detectors import robust
from logdoctor.model import LINE_NO, LOSS, STEP
from logdoctor.structure import columns
from logdoctor.structure.counters import _SKIP, CONSTANT_IS_BROKEN, degenerate_columns


def _table() -> pl.DataFrame:
    return pl.DataFrame(
        {
            STEP: [1, 2, 3, 4, 5],
            LINE_NO: [10, None, 12, 13, 14],
            LOSS: [2.0, float("nan"), None, float("inf"), 1.5],
            "tokens": pl.Series([7, 7, None, 7, 7], dtype=pl.Int64),
            "f32": pl.Series([0.1, 0.2, 0.3, 0.4, 0.5], dtype=pl.Float32),
        }
    )


def test_floats_are_the_cast_column_with_nulls_as_nan() -> None:
    t = _table()
    for col in (LOSS, "tokens", "f32", STEP):
        want = t[col].cast(pl.Float64).fill_null(float("nan")).to_numpy()
        np.testing.assert_array_equal(columns.floats(t, col), want)


def test_arrays_are_read_once_and_read_only() -> None:
    t = _table()
    a = columns.floats(t, LOSS)
    assert columns.floats(t, LOSS) is a
    with pytest.raises(ValueError):
        a[0] = 0.0
    assert columns.ints(t, LINE_NO).tolist() == [10, 0, 12, 13, 14]


def test_an_equal_table_is_read_on_its_own_and_entries_go_with_their_table() -> None:
    t, u = _table(), _table().with_columns(pl.col(LOSS) * 2)
    assert columns.floats(t, LOSS)[0] == 2.0 and columns.floats(u, LOSS)[0] == 4.0
    key = id(u)
    assert key in columns._CACHE
    del u
    gc.collect()
    assert key not in columns._CACHE


def test_series_keeps_finite_rows_read_once_and_read_only() -> None:
    """Issue 33: a metric's finite rows are selected once per table and shared by every reader, so
    no reader may change them (a write raises; the next reader gets the very same arrays)."""
    t = _table()
    from logdoctor.model import Run, RunMeta

    run = Run(table=t, meta=RunMeta(path="x", format="text", lines_read=5, lines_skipped=0))
    s = robust.series(run, LOSS)
    assert s.steps.tolist() == [1, 5] and s.values.tolist() == [2.0, 1.5] and s.lines.tolist() == [10, 14]
    for a in (s.steps, s.values, s.lines):
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 99
    again = robust.series(run, LOSS)
    assert again.values is s.values and again.steps is s.steps and again.lines is s.lines


def _degenerate_per_column(table: pl.DataFrame, min_rows: int = 3) -> list[tuple[str, float]]:
    """The former one-query-per-column rule, kept here as the reference."""
    out = []
    for col, dtype in table.schema.items():
        if col in _SKIP or not dtype.is_numeric():
            continue
        vals = table[col].drop_nulls().drop_nans()
        if vals.len() < min_rows or vals.min() != vals.max():
            continue
        if float(vals.min()) == 0.0 or col in CONSTANT_IS_BROKEN:  # type: ignore[arg-type]
            out.append((col, float(vals.min())))  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_degenerate_columns_in_one_query_equal_one_query_per_column(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 6
    cols: dict[str, pl.Series] = {STEP: pl.Series(range(n))}
    for i, kind in enumerate(["zeros", "const", "nan_const", "vary", "few", "int_zero", "int_big", "null"]):
        v = {
            "zeros": np.zeros(n),
            "const": np.full(n, 3.5),
            "nan_const": np.where(rng.random(n) < 0.4, np.nan, 0.0),
            "vary": rng.normal(size=n),
            "few": np.r_[np.zeros(2), np.full(n - 2, np.nan)],
            "int_zero": np.zeros(n, dtype=np.int64),
            "int_big": np.full(n, 2**53 + 1, dtype=np.int64) + (np.arange(n) == 0),
            "null": np.zeros(n),
        }[kind]
        s = pl.Series(v)
        if kind == "null" or rng.random() < 0.5:
            s = s.scatter([int(rng.integers(n))], None)
        cols[[LOSS, "acc", "grad_norm", "tokens", "x", "y", "z", "w"][i]] = s
    t = pl.DataFrame(cols)
    assert degenerate_columns(t) == _degenerate_per_column(t)


def test_an_analysis_leaves_no_arrays_behind_and_answers_the_same_twice() -> None:
    from pathlib import Path

    from logdoctor import pipeline

    run = pipeline.load(str(Path(__file__).resolve().parents[2] / "fixtures" / "spiky.log"))
    first = pipeline.analyze(run)
    assert id(run.table) not in columns._CACHE  # released: the report may keep the table for long
    again = pipeline.analyze(run)
    assert (again.findings, again.verdict, again.artifacts) == (first.findings, first.verdict, first.artifacts)
