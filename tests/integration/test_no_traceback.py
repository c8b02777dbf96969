"""`logdoctor analyze` never prints a traceback: on every fixture file and run folder, every real
log (when ../shared/reallogs is present) and every generated hostile input, it gives a JSON report
(exit 0 or 1) or one error line on stderr (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures.hostile import write_hostile
from logdoctor.cli import main
from tests.conftest import FIXTURES, REALLOGS


def _fixture_inputs() -> list[Path]:
    files = [p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts]
    run_dirs = [p for p in FIXTURES.rglob("*_run") if p.is_dir()]
    # files inside a run folder are analysed through the folder (and alone, as hostile-ish input)
    return sorted({*files, *run_dirs})


def _reallog_inputs() -> list[Path]:
    if not REALLOGS.is_dir():
        return []
    return sorted(p for p in REALLOGS.iterdir() if p.name not in ("MANIFEST.tsv", "README.md"))


def _assert_report_or_one_line(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["analyze", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    if rc == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("logdoctor: error:"), err
        assert json.loads(out)["error"]["exit_code"] == 2  # the JSON error document
    else:
        assert rc == 0, err
        assert json.loads(out)["series"]["steps"] >= 1
    return rc, err


@pytest.mark.parametrize("path", _fixture_inputs(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = _assert_report_or_one_line(path, capsys)
    if path.suffix in (".log", ".jsonl", ".csv") and not path.name.endswith(".truth.json"):
        assert rc == 0, f"a fixture log must give a report: {err}"


@pytest.mark.reallogs
@pytest.mark.parametrize("path", _reallog_inputs() or [None], ids=lambda p: p.name if p else "absent")
def test_reallog(path: Path | None, reallogs_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert path is not None, f"{reallogs_dir} holds no logs"
    rc, err = _assert_report_or_one_line(path, capsys)
    assert rc == 0, f"a real training log must give a report: {err}"


def test_every_hostile_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = write_hostile(tmp_path)
    for name, (path, expect) in cases.items():
        rc, _ = _assert_report_or_one_line(path, capsys)
        assert (rc == 2) == (expect == "error"), name
