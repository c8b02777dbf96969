"""The README's command blocks, run against their real output (tests/integration/test_readme.py).

A fenced block with no language whose first line starts with ``$ `` is a transcript: each ``$`` line is a
shell command, and the lines up to the next ``$`` line are what it prints (stdout and stderr together,
as a terminal shows them). Each command runs in a fresh temporary folder that holds links to the
repository's ``fixtures/`` and ``examples/`` (so a command that writes a file writes it there), with
``logdoctor`` and ``python`` on PATH running this checkout's code and interpreter, ``NO_COLOR=1`` and 80
columns. An HTML comment ``<!-- readme: cwd=DIR -->`` on the line before a block runs it inside DIR
instead (``fixtures`` or ``reallogs``, the shared real logs: that block skips where they are absent).

In the expected output a line ``...`` stands for any number of lines: a block that shows part of an
output says so. Clock times (``10:30:49``) match any time. ``console`` blocks are illustrations that
need a server, a cluster or a tracker's run folder, and are not run.

    python -m tests.readme            # print the blocks whose output differs, exit 1 if any
    python -m tests.readme --update   # write each command's real output into README.md (uncut blocks)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REALLOGS, REPO

README = REPO / "README.md"
CUT = "..."
_CWD = re.compile(r"<!--\s*readme:\s*cwd=(\S+)\s*-->")
_CLOCK = re.compile(r"\b\d\d:\d\d:\d\d\b")
#: the folders a command's temporary working folder links to
_LINKED = ("fixtures", "examples")


@dataclass(frozen=True)
class Command:
    """One ``$`` line of a block and the output the README shows for it (``first``: its line number)."""

    first: int
    shell: str
    expected: tuple[str, ...]


@dataclass(frozen=True)
class Block:
    """A transcript block: its ``$`` commands, in order, and the folder they run in."""

    line: int
    cwd: str | None
    commands: tuple[Command, ...]

    @property
    def name(self) -> str:
        return f"README.md:{self.line}"


def blocks(text: str) -> list[Block]:
    """Every transcript block of *text* (a README), in order."""
    lines = text.split("\n")
    out: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```" or i + 1 >= len(lines) or not lines[i + 1].startswith("$ "):
            i += 1 if not lines[i].startswith("```") else _skip_fence(lines, i)
            continue
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        cwd = _CWD.search(lines[i - 1]) if i else None
        out.append(Block(i + 2, cwd.group(1) if cwd else None, tuple(_commands(lines, i + 1, end))))
        i = end + 1
    return out


def _skip_fence(lines: list[str], i: int) -> int:
    """How many lines the fenced block opening at *i* spans (its fences included)."""
    j = i + 1
    while j < len(lines) and lines[j].strip() != "```":
        j += 1
    return j - i + 1


def _commands(lines: list[str], start: int, end: int) -> list[Command]:
    out: list[Command] = []
    i = start
    while i < end:
        j = i + 1
        while j < end and not lines[j].startswith("$ "):
            j += 1
        out.append(Command(i + 1, lines[i][2:], tuple(lines[i + 1 : j])))
        i = j
    return out


def matches(expected: tuple[str, ...], actual: list[str]) -> bool:
    """Whether *actual* is what *expected* shows, ``...`` lines standing for any number of lines."""
    exp = [_norm(x) for x in expected]
    act = [_norm(x) for x in actual]
    if CUT not in exp:
        return exp == act
    parts: list[list[str]] = [[]]
    for x in exp:
        if x == CUT:
            parts.append([])
        else:
            parts[-1].append(x)
    head, *middle, tail = parts
    if act[: len(head)] != head or (tail and act[len(act) - len(tail) :] != tail):
        return False
    pos, stop = len(head), len(act) - len(tail)
    for part in middle:
        found = next((k for k in range(pos, stop - len(part) + 1) if act[k : k + len(part)] == part), None)
        if found is None:
            return False
        pos = found + len(part)
    return pos <= stop


def _norm(line: str) -> str:
    return _CLOCK.sub("HH:MM:SS", line.rstrip())


def run(block: Block, scratch: Path) -> list[list[str]]:
    """Run *block*'s commands in order in a folder under *scratch*; each one's output lines."""
    bindir = scratch / "bin"
    bindir.mkdir(exist_ok=True)
    for name, line in (("logdoctor", f'"{sys.executable}" -m logdoctor'), ("python", f'"{sys.executable}"')):
        shim = bindir / name
        shim.write_text(f'#!/bin/sh\nexec {line} "$@"\n')
        shim.chmod(0o755)
    work = scratch / "work"
    work.mkdir()
    source = {"reallogs": REALLOGS, "fixtures": REPO / "fixtures"}.get(block.cwd or "")
    if source is not None:
        for entry in sorted(source.iterdir()):
            (work / entry.name).symlink_to(entry)
    else:
        for name in _LINKED:
            (work / name).symlink_to(REPO / name)
    env = {
        **os.environ,
        "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        "NO_COLOR": "1",
        "COLUMNS": "80",
        "TERM": "dumb",
    }
    out = []
    for command in block.commands:
        done = subprocess.run(
            ["bash", "-c", command.shell],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
            check=False,
        )
        text = done.stdout[:-1] if done.stdout.endswith("\n") else done.stdout
        out.append(text.split("\n") if text else [])
    return out


def runnable(block: Block) -> str | None:
    """Why *block* cannot run here (its data is absent), or None."""
    if block.cwd == "reallogs" and not REALLOGS.is_dir():
        return f"{REALLOGS} is absent (python scripts/fetch_reallogs.py fetches it)"
    if block.cwd not in (None, "reallogs", "fixtures"):
        return f"unknown cwd {block.cwd!r}"
    return None


def differences(block: Block, actual: list[list[str]]) -> list[str]:
    """A readable account of each command whose output is not what the README shows."""
    out = []
    for command, got in zip(block.commands, actual, strict=True):
        if not matches(command.expected, got):
            out.append(
                f"README.md:{command.first}: $ {command.shell}\n  README shows:\n"
                + "".join(f"    {x}\n" for x in command.expected)
                + "  it prints:\n"
                + "".join(f"    {x}\n" for x in got)
            )
    return out


def _update(text: str, fresh: dict[int, list[str]]) -> str:
    """*text* with the output of each command whose first line is a key of *fresh* replaced."""
    lines = text.split("\n")
    for block in reversed(blocks(text)):
        for command in reversed(block.commands):
            if command.first in fresh:
                at = command.first  # the $ line is at index first - 1; its output follows
                lines[at : at + len(command.expected)] = fresh[command.first]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.readme", description=__doc__.split("\n\n")[0])
    ap.add_argument("--update", action="store_true", help="write the real output into README.md")
    args = ap.parse_args(argv)
    text = README.read_text()
    bad = 0
    fresh: dict[int, list[str]] = {}
    for block in blocks(text):
        why = runnable(block)
        if why:
            print(f"{block.name}: skipped: {why}")
            continue
        with tempfile.TemporaryDirectory(prefix="readme-") as tmp:
            actual = run(block, Path(tmp))
        for command, got in zip(block.commands, actual, strict=True):
            if matches(command.expected, got):
                continue
            if args.update and CUT not in command.expected:
                fresh[command.first] = got
                print(f"README.md:{command.first}: updated")
            else:
                bad += 1
                print(differences(Block(block.line, block.cwd, (command,)), [got])[0])
    if fresh:
        README.write_text(_update(text, fresh))
    if bad and args.update:
        print(f"{bad} cut command(s) differ: edit them by hand")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
