"""The ``formats`` and ``parse`` commands, through ``main([...])``."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from logdoctor.cli import main
from logdoctor.ingest.parsers import PARSERS

FORMATS = Path(__file__).resolve().parents[2] / "fixtures" / "formats"
HF = FORMATS / "hf_trainer_state.json"


def test_formats_lists_every_parser_and_the_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["formats"]) == 0
    out = capsys.readouterr().out
    for p in PARSERS:
        assert f"  {p.name} " in out
    assert "num_updates" in out and "len_mean:" in out


@pytest.mark.parametrize("ext", ["parquet", "csv", "jsonl"])
def test_parse_writes_the_normalised_table(ext: str, tmp_path: Path) -> None:
    out = tmp_path / "sub" / f"table.{ext}"
    assert main(["parse", str(HF), "-o", str(out)]) == 0
    reader = {"parquet": pl.read_parquet, "csv": pl.read_csv, "jsonl": pl.read_ndjson}[ext]
    table = reader(out)
    assert table.height == 60
    assert table["step"].to_list()[:2] == [10, 20]
    assert table["tokens"][0] == pytest.approx(4096.0)
    truth = json.loads((FORMATS / "hf_trainer_state.json.truth.json").read_text())
    assert table["loss"][0] == pytest.approx(truth["values"]["10"]["loss"])


def test_parse_to_stdout_is_csv(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", str(FORMATS / "csv_keras_training.log")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("step,loss,line_no")
    assert len(lines) == 13


def test_parse_refuses_to_overwrite_its_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "log.csv"
    src.write_text("step,loss\n1,2.0\n2,1.5\n")
    assert main(["parse", str(src), "-o", str(src)]) == 2
    assert "refusing to overwrite an input" in capsys.readouterr().err
    assert src.read_text() == "step,loss\n1,2.0\n2,1.5\n"


def test_parse_unknown_extension_and_forced_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", str(HF), "-o", str(tmp_path / "t.xlsx")]) == 2
    assert ".xlsx" in capsys.readouterr().err
    assert main(["parse", str(HF), "--format-in", "nope"]) == 2
    assert "unknown format 'nope'" in capsys.readouterr().err


def test_parse_with_map_and_steps_per_epoch(tmp_path: Path) -> None:
    src = tmp_path / "log.csv"
    src.write_text("iter,objective,avg_tokens_per_seq\n1,2.0,100\n2,1.5,120\n3,1.4,90\n")
    out = tmp_path / "t.csv"
    args = [
        "parse",
        str(src),
        "-o",
        str(out),
        "--map",
        "loss=objective",
        "--map",
        "len_mean=avg_tokens_per_seq",
    ]
    assert main([*args, "--steps-per-epoch", "2"]) == 0
    table = pl.read_csv(out)
    assert table["loss"].to_list() == [2.0, 1.5, 1.4]
    assert table["len_mean"].to_list() == [100.0, 120.0, 90.0]
