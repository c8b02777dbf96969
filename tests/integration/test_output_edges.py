"""Edges of every output: a closed or departing stdout, spreadsheet formulas, names no UTF-8 or XML holds."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

from logdoctor.cli import main
from logdoctor.renderers import RENDERERS

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example.log"
ONE_LINE = "logdoctor: error: stdout: the reader closed the pipe (output cut short)\n"


def _bash(cmd: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", cmd], cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False)


def test_a_report_over_a_pipe_buffer_whose_reader_leaves_is_one_line_and_exit_2() -> None:
    """The verbose HTML report is > 64 KiB: the write that the leaving reader cuts short returns a
    partial count (no error), and the rest was lost with exit 0 unless every byte is written."""
    reader = f"{sys.executable} -c 'import os; os.read(0, 1)'"
    proc = _bash(f"{sys.executable} -m logdoctor analyze '{EXAMPLE}' -v -f html | {reader}; exit ${{PIPESTATUS[0]}}")
    assert (proc.returncode, proc.stderr) == (2, ONE_LINE)


@pytest.mark.parametrize("fmt", ["plain", "jsonl", "auto"])
def test_tail_started_with_stdout_closed_is_one_line_not_a_traceback(fmt: str) -> None:
    proc = _bash(f"{sys.executable} -m logdoctor tail '{EXAMPLE}' -f {fmt} --max-seconds 1 >&-")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("logdoctor: error: stdout is closed") and proc.stderr.count("\n") == 1


def test_tail_with_stdout_closed_still_gives_its_exit_code() -> None:
    """A supervisor that only waits for ``--exit-on``'s code needs no view."""
    proc = _bash(f"{sys.executable} -m logdoctor tail '{EXAMPLE}' --exit-on warning --max-seconds 20 >&-")
    assert (proc.returncode, proc.stderr) == (1, "")


def test_tail_whose_reader_leaves_is_one_line() -> None:
    reader = f"{sys.executable} -c 'import os; os.read(0, 1)'"
    proc = _bash(
        f"{sys.executable} -m logdoctor tail '{EXAMPLE}' -f plain --max-seconds 5 | {reader}; exit ${{PIPESTATUS[0]}}"
    )
    assert (proc.returncode, proc.stderr) == (2, ONE_LINE)


def _formula_log(path: Path) -> Path:
    cells = ['=HYPERLINK("http://x")', "+1+2", "-2+3", "@SUM(A1)", "\t=1", "ab12"]
    path.write_text(
        "".join(
            json.dumps({"step": i, "loss": -1.5 + 1 / i, "batch_fp": cells[i % len(cells)]}) + "\n"
            for i in range(1, 61)
        )
    )
    return path


def test_parse_csv_prefixes_text_cells_a_spreadsheet_would_run(tmp_path: Path) -> None:
    log = _formula_log(tmp_path / "run.jsonl")
    assert main(["parse", str(log), "-o", str(tmp_path / "t.csv")]) == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "t.csv").read_text())))
    fps = {r["batch_fp"] for r in rows}
    assert fps == {'\'=HYPERLINK("http://x")', "'+1+2", "'-2+3", "'@SUM(A1)", "'\t=1", "ab12"}
    assert all(not r["batch_fp"].startswith(("=", "+", "-", "@", "\t")) for r in rows)
    assert rows[0]["loss"].startswith("-")  # numbers stay numbers, negative ones too


def test_parse_keeps_text_cells_as_they_are_outside_csv(tmp_path: Path) -> None:
    log = _formula_log(tmp_path / "run.jsonl")
    assert main(["parse", str(log), "-o", str(tmp_path / "t.parquet")]) == 0
    assert main(["parse", str(log), "-o", str(tmp_path / "t.jsonl")]) == 0
    for table in (pl.read_parquet(tmp_path / "t.parquet"), pl.read_ndjson(tmp_path / "t.jsonl")):
        assert '=HYPERLINK("http://x")' in table["batch_fp"].to_list()


#: a name whose bytes are not UTF-8 (it arrives as lone surrogates), and one with U+FFFF, which
#: UTF-8 encodes but XML 1.0 forbids
NAMES = [os.fsdecode(b"r\xff\xfe.log"), "k\uffff\ufffe.log"]


class _Strict(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _well_formed(fmt: str, data: bytes) -> None:
    if fmt in ("junit", "svg"):
        ET.fromstring(data)  # raises on an ill-formed document
    elif fmt == "json":
        json.loads(data)
    elif fmt == "html":
        text = data.decode("utf-8")
        _Strict().feed(text)
        assert "\uffff" not in text and "\ufffe" not in text
    if fmt not in ("png", "pdf"):
        text = data.decode("utf-8")  # strict: valid UTF-8
        assert "\uffff" not in text and "\ufffe" not in text


@pytest.mark.parametrize("fmt", list(RENDERERS))
@pytest.mark.parametrize("name", NAMES, ids=["not-utf8", "u+ffff"])
def test_every_format_writes_a_name_no_utf8_or_xml_holds(
    fmt: str, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / name  # the surrogates stand for the bytes (os.fsencode)
    log.write_bytes(EXAMPLE.read_bytes())
    out = tmp_path / f"report.{fmt}"
    assert main(["analyze", os.fsdecode(log), "-f", fmt, "-o", str(out)]) == 0, capsys.readouterr().err
    _well_formed(fmt, out.read_bytes())


def test_a_name_that_is_not_utf8_is_shown_as_its_bytes_on_stdout(tmp_path: Path) -> None:
    log = os.fsencode(tmp_path) + b"/r\xff.log"
    Path(os.fsdecode(log)).write_bytes(EXAMPLE.read_bytes())
    proc = subprocess.run(
        [sys.executable, "-m", "logdoctor", "analyze", log, "-f", "junit"],
        cwd=REPO,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr
    assert b"r\\xff.log" in proc.stdout
    ET.fromstring(proc.stdout)
