"""CSV headers: any name RFC 4180 allows is read; only the step/loss columns decide whether a table is
a training log, the same in analyze and tail; tail on a table it cannot read says so and exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor.cli import main

TAIL = ["--format", "jsonl", "--idle-timeout", "0.3", "--poll", "--poll-interval", "0.05"]
#: header cells RFC 4180 allows that the old header pattern refused (each one made the whole file unreadable)
ODD_NAMES = ["acc@1", "bleu=sacre", "p<0.05", '"a;b"', "время", '"x, y"', '"say ""hi"""', "", "50%ile"]
NAN_STEP = 40


def _write(path: Path, names: list[str], sep: str = ",", extra: str = "1.5") -> Path:
    header = sep.join(["step", "loss", *names])
    rows = [
        sep.join([str(i), "nan" if i == NAN_STEP else f"{3 - 0.01 * i:.3f}", *[extra] * len(names)])
        for i in range(1, 81)
    ]
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def _analyze(log: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main(["analyze", str(log), "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


def _tail(log: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, object]], str]:
    code = main(["tail", str(log), *TAIL])
    captured = capsys.readouterr()
    events = [json.loads(line) for line in captured.out.splitlines() if line.strip()]
    return code, events, captured.err


def _codes(doc: dict[str, object]) -> set[str]:
    return {str(f["code"]) for f in doc["findings"]}  # type: ignore[attr-defined,index]


@pytest.mark.parametrize("name", ODD_NAMES, ids=lambda n: n or "empty")
def test_an_odd_header_name_is_read_and_the_nan_found(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _write(tmp_path / "run.csv", [name, "lr"])
    code, doc = _analyze(log, capsys)
    assert code != 2 and doc["source"]["format"] == "csv"  # type: ignore[index]
    assert doc["structure"]["rows"] == 80  # type: ignore[index]
    assert "LD001" in _codes(doc)
    code, events, err = _tail(log, capsys)
    assert code == 0, err
    stop = events[-1]
    assert stop["event"] == "stop" and stop["sources"][0]["rows"] == 80  # type: ignore[index]
    assert any(e["finding"]["code"] == "LD001" for e in events if e["event"] == "finding")  # type: ignore[index]


def test_every_odd_name_at_once_and_a_semicolon_table_with_commas_in_quotes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _write(tmp_path / "all.csv", ODD_NAMES)
    doc = _analyze(log, capsys)[1]
    assert "LD001" in _codes(doc)
    assert {"acc_1", "время", "x_y"} <= set(doc["structure"]["metrics"])  # type: ignore[index]
    semi = _write(tmp_path / "semi.csv", ['"x, y"', "a,b", "время"], sep=";")
    code, doc = _analyze(semi, capsys)
    assert code != 2 and doc["structure"]["rows"] == 80 and "LD001" in _codes(doc)  # type: ignore[index]


def test_text_columns_do_not_hide_a_training_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Timestamps and tags make most cells non-numeric; the loss column still makes it a training log."""
    log = _write(tmp_path / "tagged.csv", ["time", "phase", "note"], extra="2024-01-01T00:00")
    code, doc = _analyze(log, capsys)
    assert code != 2 and doc["source"]["format"] == "csv" and doc["structure"]["rows"] == 80  # type: ignore[index]
    _, events, _ = _tail(log, capsys)
    assert events[-1]["sources"][0]["rows"] == 80  # type: ignore[index]


def test_a_header_row_of_numbers_is_data_not_a_header(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "noheader.csv"
    log.write_text("".join(f"{i},{3 - 0.01 * i:.3f}\n" for i in range(1, 50)))
    _, doc = _analyze(log, capsys)
    assert doc.get("source", {}).get("format") != "csv"  # type: ignore[attr-defined]


def test_tail_on_a_table_without_a_loss_column_says_so_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "noloss.csv"
    log.write_text('step,"val acc",acc@1\n' + "".join(f"{i},{0.01 * i},0.5\n" for i in range(1, 50)))
    code, _, err = _tail(log, capsys)
    lines = [ln for ln in err.splitlines() if ln.startswith("logdoctor: error")]
    assert code == 2 and len(lines) == 1
    assert "no column of the CSV header is one" in lines[0] and "no later line can add one" in lines[0]
    assert main(["analyze", str(log)]) == 2
    assert "no record holds a training loss" in capsys.readouterr().err
