"""Generators of valid-but-hostile inputs and the contract every command keeps on them (shared by the
seeded run in tests/property/test_fuzz_cli.py and the long run in bench/fuzz.py --cli).

An input is JSON lines or text whose values are any JSON (lone surrogates, huge and tiny numbers,
deep nesting, keys that change every line), beside an optional pyproject.toml in the working folder
(any TOML: another tool's section, deeply nested). Every command (analyze, check, parse) and every
report format runs on it, and must: exit 0, 1 or 2 with their documented meaning (2: one error line;
``check`` 1: findings at the gate), print no traceback, write well-formed JSON/XML/HTML/UTF-8, and
write nothing but its ``-o`` file.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from hypothesis import strategies as st

from logdoctor.cli import main

FORMATS = ("text", "json", "markdown", "html", "junit", "github")
#: Deeper than CPython's parsers recurse (1,000).
DEEP = 1500

_SURROGATES = st.sampled_from(["\udcff", "\ud800", "a\udfffb", "\ud83d"])  # lone halves
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**300, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e308, -1e308, 5e-324, 1e-400]),
    st.text(max_size=8),
    _SURROGATES,
)
_VALUES = st.recursive(
    _SCALARS,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4) | _SURROGATES, kids, max_size=3),
    max_leaves=6,
)


@dataclass(frozen=True)
class Case:
    """One input: the log's name and text, an optional pyproject.toml text, a command and a format."""

    name: str
    log: str
    pyproject: str | None
    command: str
    fmt: str


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _value_text(value: object, deep: bool) -> str:
    text = json.dumps(value, ensure_ascii=True)  # a lone surrogate is written as its \\u escape
    return _deep(DEEP) if deep else text


@st.composite
def jsonl_logs(draw: st.DrawFn) -> str:
    """JSON lines with steps and losses beside any JSON values, under keys that may change every line."""
    n = draw(st.integers(1, 80))
    moving = draw(st.booleans())
    extra = draw(st.lists(_VALUES, min_size=1, max_size=4))
    deep_at = draw(st.none() | st.integers(0, n - 1))
    lines = []
    for i in range(n):
        key = f"k{i}" if moving else draw(st.sampled_from(["acc", "lr", "\\udcff", "x"]))
        value = _value_text(extra[i % len(extra)], i == deep_at)
        loss = draw(st.sampled_from(["1.5", "NaN", "1e400", "2.0", str(2 - i / 100)]))
        lines.append(f'{{"step": {i}, "loss": {loss}, "{key}": {value}}}')
    return "\n".join(lines) + "\n"


@st.composite
def text_logs(draw: st.DrawFn) -> str:
    """``step N loss=X key=value`` lines whose keys may change every line, with odd characters."""
    n = draw(st.integers(1, 80))
    moving = draw(st.booleans())
    word = draw(st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), max_size=6))
    rows = []
    for i in range(n):
        key = f"m{i}_{word}" if moving else f"acc{word}"
        rows.append(f"step {i} loss={2 - i / 100:.4f} {key}={draw(st.sampled_from(['0.5', '1e400', 'nan', '-0']))}")
    return "\n".join(rows) + "\n"


_TOML = st.one_of(
    st.none(),
    st.just("[tool.other]\nx = " + _deep(DEEP) + "\n"),
    st.just("[project]\nname = 'x'\n[project.optional-dependencies]\ny = " + _deep(DEEP) + "\n"),
    st.just("[tool.black]\nline-length = 100\n"),
    st.just("not = [valid toml\n"),
)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """One input and one command/format to run on it."""
    kind = draw(st.sampled_from(["jsonl", "text"]))
    log = draw(jsonl_logs() if kind == "jsonl" else text_logs())
    name = f"run.{'jsonl' if kind == 'jsonl' else 'log'}"
    return Case(
        name, log, draw(_TOML), draw(st.sampled_from(["analyze", "check", "parse"])), draw(st.sampled_from(FORMATS))
    )


class _Strict(HTMLParser):
    def error(self, message: str) -> None:  # pragma: no cover - only older Pythons call it
        raise ValueError(message)


def _well_formed(fmt: str, data: bytes) -> None:
    text = data.decode("utf-8")  # every format is UTF-8 (raises on a lone surrogate that got through)
    if fmt == "json":
        json.loads(text)
    elif fmt == "junit":
        ET.fromstring(data)
    elif fmt == "html":
        parser = _Strict()
        parser.feed(text)
        parser.close()
        assert "<html" in text.lower()


def run_case(case: Case) -> None:
    """Run ``case`` in a fresh folder and assert the contract (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        log = folder / case.name
        log.write_text(case.log, encoding="utf-8", errors="surrogatepass")
        if case.pyproject is not None:
            (folder / "pyproject.toml").write_text(case.pyproject)
        out = folder / "out" / ("steps.csv" if case.command == "parse" else f"report.{case.fmt}")
        args = [case.command, str(log), "-o", str(out)]
        if case.command != "parse":
            args += ["-f", case.fmt]
        before = sorted(p.name for p in folder.iterdir())
        stdout, stderr = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                rc = main(args)
        finally:
            os.chdir(cwd)
        err = stderr.getvalue()
        assert "Traceback" not in err + stdout.getvalue(), err
        assert rc in (0, 1, 2), (rc, err)
        after = sorted(p.name for p in folder.iterdir() if p.name != "out")
        assert after == before, f"wrote outside -o: {set(after) - set(before)}"
        written = sorted(p.name for p in (folder / "out").iterdir()) if (folder / "out").exists() else []
        if rc == 2:
            lines = [ln for ln in err.strip().splitlines() if not ln.startswith("note:")]
            assert len(lines) == 1 and lines[0].startswith("logdoctor: error:"), err
            assert written == [], "a partial output was left behind"
            return
        assert written == [out.name], (written, err)
        data = out.read_bytes()
        if case.command == "parse":
            data.decode("utf-8")
            return
        _well_formed(case.fmt, data)
        if case.command == "check" and case.fmt == "json":
            doc = json.loads(data)
            assert (rc == 1) == bool(doc["findings"]) or rc == 0, (rc, doc["findings"])
