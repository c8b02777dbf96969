"""A malformed configuration is one line and exit 2 for every command that reads one; a broken
pyproject.toml of another project above the working folder is passed over with a note."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = str(REPO / "fixtures" / "example.log")

#: every command that reads the configuration, as it would run in the test's folder
COMMANDS = {
    "analyze": ["analyze", EXAMPLE, "-q"],
    "check": ["check", EXAMPLE, "-q"],
    "plot": ["plot", EXAMPLE, "-o", "fig.png"],
    "parse": ["parse", EXAMPLE, "-o", "steps.csv"],
    "compare": ["compare", EXAMPLE, EXAMPLE],
    "tail": ["tail", EXAMPLE, "--format", "plain", "--idle-timeout", "0", "--max-seconds", "5"],
}

MALFORMED = {
    "table is a number": "[tool]\nlogdoctor = 3\n",
    "table is a string": '[tool]\nlogdoctor = "strict"\n',
    "not UTF-8": b"[tool.logdoctor]\nselect = ['\xff']\n",
    "invalid TOML that names us": "[tool.logdoctor]\nselect = = 1\n",
    "detector not a table": "[tool.logdoctor]\nspikes = 3\n",
    "bad threshold": '[tool.logdoctor.spikes]\nz_threshold = "high"\n',
}


def _write(path: Path, body: str | bytes) -> None:
    path.write_bytes(body if isinstance(body, bytes) else body.encode())


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_config_is_one_line_and_exit_2(
    command: str, case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path / "pyproject.toml", MALFORMED[case])
    monkeypatch.chdir(tmp_path)
    rc = main(COMMANDS[command])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("logdoctor: error:"), err
    assert "pyproject.toml" in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pyproject.toml"]  # nothing written


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_broken_unrelated_pyproject_above_is_passed_over_with_a_note(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(tmp_path / "pyproject.toml", "[project\nname = 'someone-else'\n")
    work = tmp_path / "runs"
    work.mkdir()
    monkeypatch.chdir(work)
    rc = main(COMMANDS[command])
    err = capsys.readouterr().err
    assert rc in (0, 1), err
    assert f"logdoctor: note: ignoring {tmp_path / 'pyproject.toml'}: invalid TOML" in err
    assert "(it has no [tool.logdoctor])" in err and "error" not in err


def test_a_config_given_as_a_directory_is_named_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", EXAMPLE, "--config", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"logdoctor: error: --config {tmp_path}: is a directory"
