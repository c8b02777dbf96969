"""Reading sequence lengths from text, CSV, JSONL, Parquet and Arrow files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor.buckets.lengths import read_lengths
from logdoctor.errors import InputError

VALUES = [12, 7, 300, 41, 41]


def test_text_one_per_line(tmp_path: Path) -> None:
    f = tmp_path / "lengths.txt"
    f.write_text("\n".join(map(str, VALUES)) + "\n")
    assert read_lengths(str(f)).tolist() == VALUES


@pytest.mark.parametrize("kind", ["csv", "parquet", "ipc", "ipc_stream", "ndjson"])
def test_tabular_column_guessed_by_name(tmp_path: Path, kind: str) -> None:
    frame = pl.DataFrame({"id": [5, 6, 7, 8, 9], "num_tokens": VALUES, "text": list("abcde")})
    f = tmp_path / f"data.{kind}"
    getattr(frame, f"write_{kind}")(f)
    assert read_lengths(str(f)).tolist() == VALUES


def test_single_integer_column_is_guessed(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    pl.DataFrame({"text": list("abcde"), "n": VALUES}).write_csv(f)
    assert read_lengths(str(f)).tolist() == VALUES


def test_explicit_column_and_ambiguity(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    pl.DataFrame({"a": VALUES, "b": [1, 2, 3, 4, 5]}).write_csv(f)
    with pytest.raises(InputError, match="pass --column"):
        read_lengths(str(f))
    assert read_lengths(str(f), "b").tolist() == [1, 2, 3, 4, 5]
    with pytest.raises(InputError, match="no column 'c'"):
        read_lengths(str(f), "c")


@pytest.mark.parametrize(
    "content, match",
    [
        ("", "empty"),
        ("5\n0\n", "positive integer"),
        ("5\nx\n", "cannot read"),
        ("length\n5\n2.5\n", "positive integer"),
    ],
)
def test_bad_input_is_one_line_input_error(tmp_path: Path, content: str, match: str) -> None:
    f = tmp_path / "bad.txt"
    f.write_text(content)
    with pytest.raises(InputError, match=match) as err:
        read_lengths(str(f))
    assert "\n" not in str(err.value)


def test_million_lengths(tmp_path: Path) -> None:
    lengths = np.random.default_rng(0).integers(1, 9000, size=1_000_000)
    f = tmp_path / "big.parquet"
    pl.DataFrame({"length": lengths}).write_parquet(f)
    assert np.array_equal(read_lengths(str(f)), lengths)


@pytest.mark.parametrize("large", [False, True])
def test_json_lines_keep_what_late_lines_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, large: bool) -> None:
    """Every line decides the schema (polars' default reads 100): a float length first seen on line 151
    is read, and a column first seen late is found by name; ``large``: the sampled path of big files."""
    from logdoctor.ingest.parsers import ndjson

    if large:
        monkeypatch.setattr(ndjson, "LARGE", 10)
        monkeypatch.setattr(ndjson, "SAMPLE", 5)
    late_float = tmp_path / "late_float.jsonl"
    late_float.write_text("".join(f'{{"length": {10 + i}}}\n' for i in range(150)) + '{"length": 12.0}\n\n')
    assert read_lengths(str(late_float)).tolist() == [10 + i for i in range(150)] + [12]
    late_key = tmp_path / "late_key.jsonl"
    late_key.write_text(
        "".join(f'{{"id": {i}, "chars": {i + 40}}}\n' for i in range(150))
        + "".join(f'{{"id": {i}, "chars": 9, "seq_len": {i + 1}}}\n' for i in range(150))
    )
    with pytest.raises(InputError, match=r"column 'seq_len'.*150 bad values"):  # found by name, half missing
        read_lengths(str(late_key))


def test_csv_types_from_every_row_when_a_late_value_does_not_fit(tmp_path: Path) -> None:
    """polars infers a CSV's types from its first 10,000 rows; a later text id must not hide the lengths."""
    f = tmp_path / "late.csv"
    f.write_text("id,length\n" + "".join(f"{i},{10 + i % 90}\n" for i in range(10_050)) + "x,12\n")
    assert read_lengths(str(f)).tolist() == [10 + i % 90 for i in range(10_050)] + [12]
