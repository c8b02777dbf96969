"""Property tests: values round-trip through JSONL and CSV, and a chunked read equals a whole read."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logdoctor import pipeline
from logdoctor.ingest import memory

_rows = st.lists(st.tuples(st.floats(1e-6, 1e6), st.floats(0, 1)), min_size=1, max_size=80)
_noise = st.sampled_from(["", "WARNING: foo bar\n", "Traceback (most recent call last):\n", "  \n", "eval 3\n"])


def _load(text: str, suffix: str, max_memory: int | None = None) -> pipeline.Run:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"input{suffix}"
        path.write_text(text)
        return pipeline.load(str(path), max_memory=max_memory)


@given(_rows)
def test_jsonl_round_trip(rows: list[tuple[float, float]]) -> None:
    text = "".join(json.dumps({"step": i + 1, "loss": loss, "lr": lr}) + "\n" for i, (loss, lr) in enumerate(rows))
    t = _load(text, ".jsonl").table
    assert t["loss"].to_list() == [r[0] for r in rows] and t["lr"].to_list() == [r[1] for r in rows]


@given(_rows)
def test_csv_round_trip(rows: list[tuple[float, float]]) -> None:
    text = "step,loss,lr\n" + "".join(f"{i + 1},{loss!r},{lr!r}\n" for i, (loss, lr) in enumerate(rows))
    t = _load(text, ".csv").table
    assert t["step"].to_list() == list(range(1, len(rows) + 1))
    assert t["loss"].to_list() == [r[0] for r in rows] and t["lr"].to_list() == [r[1] for r in rows]


@given(st.lists(st.tuples(st.floats(1e-3, 1e3), _noise), min_size=1, max_size=400), st.sampled_from([".log", ".csv"]))
def test_chunked_read_equals_whole_read(rows: list[tuple[float, str]], suffix: str) -> None:
    if suffix == ".csv":
        text = "step,loss\n" + "".join(f"{i + 1},{loss!r}\n" for i, (loss, _) in enumerate(rows))
    else:
        text = "".join(f"{noise}step {i + 1} | loss={loss!r}\n" for i, (loss, noise) in enumerate(rows))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(memory, "MIN_CHUNK", 512)  # many chunks even for a small log
        whole = _load(text, suffix)
        streamed = _load(text, suffix, max_memory=1024)  # in-memory limit 128 bytes
    assert streamed.table.select(whole.table.columns).equals(whole.table)
    assert streamed.meta.lines_read == whole.meta.lines_read
