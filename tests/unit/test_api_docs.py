"""docs/api.md's examples run and print what the page says they print (doctest, one namespace for
the page, from the repository's root where its fixture paths lead)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "api.md"
BLOCK = re.compile(r"^```pycon\n(.*?)^```$", re.S | re.M)


def test_the_pages_examples_print_what_it_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    text = PAGE.read_text(encoding="utf-8")
    blocks = [(text[: m.start()].count("\n") + 1, m.group(1)) for m in BLOCK.finditer(text)]
    assert len(blocks) >= 6
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    globs: dict[str, object] = {}
    for line, block in blocks:
        test = parser.get_doctest(block, globs, f"api.md:{line}", str(PAGE), line)
        runner.run(test, clear_globs=False)
        globs.update(test.globs)  # a DocTest runs in a copy: the next block sees what this one made
    assert runner.summarize(verbose=False).failed == 0
