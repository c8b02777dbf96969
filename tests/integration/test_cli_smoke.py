"""End-to-end smoke tests of the CLI through ``main([...])``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import __version__
from logdoctor.cli import main

LOG = (
    "config: lr=3e-4 batch=8\n"
    "step 1/100: loss=4.60 acc=0.03 lr=3e-4 | batch: n_seq=12 tokens=7904 len_mean=658.7\n"
    "step 2/100: loss=4.50 acc=0.03 lr=3e-4 | batch: n_seq=11 tokens=7900 len_mean=700.2\n"
)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert __version__ in capsys.readouterr().out


def test_analyze_json_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "train.log"
    log.write_text(LOG)
    assert main(["analyze", str(log), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format_version"] == 4
    assert doc["status"] in {"ok", "warning", "error"}
    assert doc["series"]["steps"] == 2 and doc["series"]["has_length_stats"] is True
    assert doc["source"]["lines_skipped"] == 1
    assert doc["verdict"]["batching"] in {"sorted", "static", "healthy", "not_batching", "inconclusive"}


@pytest.mark.parametrize("args", [["analyze", "/no/such/file"], ["analyze"], ["analyze", "x", "--format", "nope"]])
def test_bad_input_is_exit_2_with_one_line(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip()


def test_output_never_overwrites_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "train.log"
    log.write_text(LOG)
    assert main(["analyze", str(log), "-o", str(log)]) == 2
    assert log.read_text() == LOG
    assert "refusing to overwrite" in capsys.readouterr().err
