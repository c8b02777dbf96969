"""The README's command blocks print what the README shows (tests/readme.py runs them).

A block whose output changed fails here until ``python -m tests.readme --update`` writes the real
output back (a cut block, with ``...``, is edited by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import readme
from tests.conftest import REQUIRE_REALLOGS

BLOCKS = readme.blocks(readme.README.read_text())


def test_the_readme_has_its_transcripts() -> None:
    # the report on the bundled example, the CI gate, the probe, tail, parse, buckets and compare
    shown = {c.shell.split()[1] for b in BLOCKS for c in b.commands if c.shell.startswith("logdoctor ")}
    assert {"analyze", "check", "probe", "tail", "plot", "parse", "formats", "buckets", "compare"} <= shown


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_a_readme_block_prints_what_it_shows(block: readme.Block, tmp_path: Path) -> None:
    why = readme.runnable(block)
    if why:
        if REQUIRE_REALLOGS and block.cwd == "reallogs":
            pytest.fail(why)
        pytest.skip(why)
    diffs = readme.differences(block, readme.run(block, tmp_path))
    assert not diffs, "\n".join(diffs) + "\n(python -m tests.readme --update writes the real output)"


def test_a_wrong_line_in_a_block_is_seen(tmp_path: Path) -> None:
    text = "```\n$ logdoctor formats | head -1\nFormats (detected from the content, tried in no order):\n```\n"
    (block,) = readme.blocks(text)
    assert readme.differences(block, readme.run(block, tmp_path))


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        (("a", "b"), ["a", "b"], True),
        (("a", "b"), ["a", "b", "c"], False),
        (("a", "...", "d"), ["a", "b", "c", "d"], True),
        (("a", "..."), ["a"], True),
        (("...", "c"), ["a", "b"], False),
        (("a", "...", "b", "...", "c"), ["a", "x", "b", "y", "c"], True),
        (("a", "...", "c", "...", "b"), ["a", "b", "c"], False),
        (("a", "...", "a"), ["a"], False),  # the head and the tail may not share a line
        (("10:30:49 following",), ["17:39:00 following"], True),  # clock times match any time
    ],
)
def test_cut_lines_stand_for_any_number_of_lines(expected: tuple[str, ...], actual: list[str], ok: bool) -> None:
    assert readme.matches(expected, actual) is ok


def test_update_rewrites_only_the_command_that_differs() -> None:
    text = "x\n```\n$ one\nold\n$ two\nkept\n```\n"
    (block,) = readme.blocks(text)
    assert [c.first for c in block.commands] == [3, 5]
    assert readme._update(text, {3: ["new", "lines"]}) == "x\n```\n$ one\nnew\nlines\n$ two\nkept\n```\n"
