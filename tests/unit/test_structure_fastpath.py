"""The in-order fast path of structure.resolve gives exactly what the full rules give."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.structure import resolve as structure
from logdoctor.structure.build import build_run


def _tables() -> list[pl.DataFrame]:
    rng = np.random.default_rng(3)
    n = 500
    steps = np.cumsum(rng.integers(1, 4, n))
    base = {"step": steps, "loss": rng.normal(2, 0.1, n), "line_no": np.arange(1, n + 1) * 2}
    first_flag = np.zeros(n)
    first_flag[0] = 1.0
    late_flag = np.zeros(n)
    late_flag[300] = 1.0
    back = steps.copy()
    back[250:] -= 40  # a resume
    return [
        pl.DataFrame(base),
        pl.DataFrame({**base, "restart": first_flag}),  # the initial start: not a resume
        pl.DataFrame({**base, "restart": late_flag}),  # a restart marker: slow path
        pl.DataFrame({**base, "step": back}),
        pl.DataFrame({**base, "line_no": base["line_no"][::-1]}),  # not in file order
        pl.DataFrame(base).with_columns(acc=pl.Series([None if r < 0.1 else r for r in rng.random(n)])),
    ]


@pytest.mark.parametrize("table", _tables(), ids=["plain", "first-flag", "late-flag", "resume", "reversed", "acc"])
def test_fast_path_matches_full_rules(table: pl.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    result = ParseResult(table=table, lines_read=table.height)
    fast = build_run(result, "x", "jsonl")
    monkeypatch.setattr(structure, "_in_order", lambda t: False)
    slow = build_run(result, "x", "jsonl")
    assert_frame_equal(fast.table, slow.table)
    assert fast.meta == slow.meta


def test_fast_path_is_taken_only_when_nothing_to_resolve() -> None:
    tables = _tables()
    assert [structure._in_order(t) for t in tables] == [True, True, False, False, False, True]
