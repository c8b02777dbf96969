"""Streamed JSON documents (issue 33, point 2): the same members and frames as reading them whole."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from logdoctor.ingest import jsonstream
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.framechunks import FrameChunks
from logdoctor.ingest.jsonstream import NotStreamable, read_object
from logdoctor.ingest.parsers.hf_state import HfTrainerStateParser
from logdoctor.ingest.sources import open_source

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "formats" / "hf_trainer_state.json"


def _whole(data: bytes, key: str) -> tuple[dict[str, Any], list[Any]]:
    doc = json.loads(data.decode("utf-8", errors="replace"))
    return doc, doc.pop(key)


def _streamed(data: bytes, key: str, block: int) -> tuple[dict[str, Any], list[Any]]:
    items: list[Any] = []
    return read_object(data, key, items.append, block=block), items


@pytest.mark.parametrize("block", [1, 2, 3, 5, 64, 1 << 22])
def test_members_and_elements_equal_json_loads_at_every_block_boundary(block: int) -> None:
    doc = {
        "a": 2.5,
        "b": [1, {"x": None}],
        "h": [
            {"loss": 1e-5, "s": "é\u2603\U0001f600"},
            7,
            -0.0,
            "x",
            True,
            {"n": 12345678901234567890, "e": 1.5e300, "nan": float("nan")},
        ],
        "z": {"nested": [1.25, 2]},
        "t": 'multi\nline "quoted"',
    }
    data = json.dumps(doc, indent=2).encode() + b"\n\n"
    data = data.replace(b"1.5e+300", b"1.5E+300")
    members, items = _streamed(data, "h", block)
    whole, history = _whole(data, "h")
    assert members == whole
    assert json.dumps(items) == json.dumps(history)  # NaN == NaN as text


def test_undecodable_bytes_are_replaced_as_a_whole_decode_does() -> None:
    data = b'{"h": [{"k": "a\xff\xfeb\xe2\x98"}, {"k": "\xe2\x98\x83"}], "m": 1}'
    for block in (1, 2, 3, 1 << 22):
        assert _streamed(data, "h", block) == _whole(data, "h")


@pytest.mark.parametrize(
    "text",
    [
        '{"h": [1, 2]} extra',
        '[{"h": []}]',
        '{"h": {"a": 1}}',
        '{"h": [1, 2], "h": [3]}',
        '{"g": [1]}',
        '{"h": [1, 2,]}',
        '{"h": [1 2]}',
        '{"h": [1], "m": tru}',
        '{"h": [1] "m": 1}',
        '{1: 2, "h": []}',
        "",
        '\ufeff{"h": []}',
    ],
)
def test_what_json_loads_would_not_read_the_same_is_not_streamable(text: str) -> None:
    with pytest.raises(NotStreamable):
        read_object(text.encode(), "h", lambda _: None, block=3)


def _records(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        rec: dict[str, Any] = {"step": i}
        if rng.random() < 0.8:
            rec["loss"] = rng.choice([rng.random(), 1, 0, None])  # ints among floats, as HF writes 0
        if rng.random() < 0.3:
            rec["eval_loss"] = rng.random()
        if i > n // 2:
            rec["late"] = rng.choice([None, 3])  # all null in the early chunks, then integers
        out.append(rec)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_chunked_frames_equal_one_from_dicts(seed: int) -> None:
    recs = _records(random.Random(seed), 300)
    want = pl.from_dicts(recs, infer_schema_length=None, strict=False)
    for chunk in (1, 7, 50, 1000):
        chunks = FrameChunks(strict=False, chunk=chunk)
        chunks.extend(recs)
        got = chunks.frame()
        assert got is not None and chunks.count == len(recs)
        assert got.schema == want.schema and got.equals(want)


def test_chunks_that_would_combine_differently_are_refused() -> None:
    chunks = FrameChunks(strict=False, chunk=2)
    chunks.extend([{"a": 1.0}, {"a": 2.0}, {"a": "x"}, {"a": "y"}])
    assert chunks.frame() is None  # whole, the floats would be read as text
    assert FrameChunks(strict=False).frame().is_empty()  # type: ignore[union-attr]


def _parse(path: Path) -> pl.DataFrame:
    return HfTrainerStateParser().parse(open_source(str(path)), FieldMap.parse([])).table


def _streamed_and_whole(paths: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each document chunked small (so that the chunks must combine), then read whole."""
    monkeypatch.setattr("logdoctor.ingest.framechunks.CHUNK", 7)
    streamed = [_parse(p) for p in paths]

    def whole(*_: object) -> dict[str, Any]:
        raise NotStreamable("read whole")

    monkeypatch.setattr(jsonstream, "read_object", whole)
    for path, got in zip(paths, streamed, strict=True):
        want = _parse(path)
        assert got.schema == want.schema and got.equals(want), path.name


def test_the_trainer_state_fixture_streams_to_the_table_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    _streamed_and_whole([FIXTURE], monkeypatch)


@pytest.mark.reallogs
def test_real_trainer_states_stream_to_the_tables_read_whole(
    reallogs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = [p for p in sorted(reallogs_dir.glob("*.json")) if '"log_history"' in p.read_text(errors="replace")[:8192]]
    assert len(real) >= 5
    _streamed_and_whole(real, monkeypatch)
