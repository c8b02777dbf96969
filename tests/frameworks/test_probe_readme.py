"""README's "probe" section prints what the command prints on examples/probe_pipeline.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")

from logdoctor.cli import main

REPO = Path(__file__).resolve().parents[2]
SECTION = (REPO / "README.md").read_text(encoding="utf-8").split("\n### `probe`", 1)[1].split("\n### ", 1)[0]


def _blocks() -> list[tuple[list[str], str]]:
    """(the command's arguments, the output shown) of each ``$ logdoctor probe`` block."""
    out = []
    for block in re.findall(r"```\n\$ logdoctor (probe .*?)\n(.*?)```", SECTION, flags=re.S):
        command, shown = block
        out.append((command.split(";")[0].split(), shown))
    return out


def test_the_readme_shows_two_probes() -> None:
    assert [args[:2] for args, _ in _blocks()] == [["probe", "examples/probe_pipeline.py:build_loader"]] * 2


def test_the_readme_output_is_the_commands(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("NO_COLOR", "1")
    for args, shown in _blocks():
        code = main(args)
        printed = capsys.readouterr().out
        if shown.rstrip().endswith(("\n0", "\n1")):  # `; echo $?`
            shown, want = shown.rstrip().rsplit("\n", 1)
            assert code == int(want)
            assert printed == shown + "\n"
        else:  # the head of the report, down to its findings (the README cuts the rest: `...`)
            assert code == 1
            assert printed.split("\nFindings\n")[0] == shown.rstrip("\n").removesuffix("\n...")
