"""A run table's columns as numpy arrays, read from polars once per table.

Every polars query costs ~0.1-1 ms whatever the frame's size, and one analysis reads the same few
columns dozens of times (robust series, length statistics): on a log of a few hundred steps that fixed
cost was most of the analysis. The arrays are kept while the table lives (a table is never changed in
place: every stage builds a new frame) and handed out read-only, so that no caller can change what the
next one reads.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import polars as pl

T = TypeVar("T")

#: id(table) -> {(kind, column): array}; an entry goes when its table is collected (so an id is never
#: reused while its entry is here)
_CACHE: dict[int, dict[tuple[str, str], np.ndarray]] = {}


def _memo(table: pl.DataFrame) -> dict[tuple[str, str], np.ndarray]:
    key = id(table)
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = {}
        weakref.finalize(table, _CACHE.pop, key, None)
    return found


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def floats(table: pl.DataFrame, column: str) -> np.ndarray:
    """``column`` cast to float64, nulls as NaN (read-only; KeyError when the table lacks it)."""
    memo = _memo(table)
    found = memo.get(("f", column))
    if found is None:
        s = table[column].cast(pl.Float64)
        found = memo[("f", column)] = _frozen(np.array(s.to_numpy(), dtype=np.float64))
    return found


def ints(table: pl.DataFrame, column: str) -> np.ndarray:
    """An integer ``column`` (``step``, ``line_no``) as int64, nulls as 0 (read-only)."""
    memo = _memo(table)
    found = memo.get(("i", column))
    if found is None:
        s = table[column].fill_null(0)
        found = memo[("i", column)] = _frozen(np.array(s.to_numpy(), dtype=np.int64))
    return found


def finite_rows(table: pl.DataFrame, column: str, step: str, line: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(``step``, ``column``, ``line``) at the rows where ``column`` is finite (read-only, kept like the
    columns: a detector reads the same metric's finite rows many times, ~35 a small analysis)."""
    memo = _memo(table)
    key = ("finite", column)
    if key not in memo:
        vals = floats(table, column)
        ok = np.isfinite(vals)
        memo[key] = _frozen(vals[ok])
        memo[("finite_steps", column)] = _frozen(ints(table, step)[ok])
        memo[("finite_lines", column)] = _frozen(ints(table, line)[ok])
    return memo[("finite_steps", column)], memo[key], memo[("finite_lines", column)]


def release(table: pl.DataFrame) -> None:
    """Drop ``table``'s arrays now (an analysis is over; its report may keep the table for long)."""
    _CACHE.pop(id(table), None)


#: id(array) -> {name: value}: what was derived from a read-only array (an entry goes with its array)
_DERIVED: dict[int, dict[str, object]] = {}


def derived(a: np.ndarray, name: str, compute: Callable[[np.ndarray], T]) -> T:
    """``compute(a)``, computed once per read-only array ``a`` and ``name`` and shared by every caller
    (a log-loss and its noise scale are read by four detectors). Only an array that owns its memory and
    is read-only (the columns above, and what this function hands out) is remembered: a writeable
    array, or a view whose base may be writeable, may change between calls, so it is computed afresh.
    An array result is handed out read-only like the columns. The caller names what ``compute`` is:
    the same name must always mean the same function of ``a``."""
    if a.flags.writeable or not a.flags.owndata:
        return compute(a)
    key = id(a)
    memo = _DERIVED.get(key)
    if memo is None:
        memo = _DERIVED[key] = {}
        weakref.finalize(a, _DERIVED.pop, key, None)
    if name not in memo:
        value = compute(a)
        memo[name] = _frozen(value) if isinstance(value, np.ndarray) else value
    return memo[name]  # type: ignore[return-value]
