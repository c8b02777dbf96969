"""Gold-file tests: every text renderer on every hand-built report, compared with tests/gold/files.

Regenerate after an intended change with ``LOGDOCTOR_UPDATE_GOLD=1 python -m pytest tests/gold``;
mismatches are written to tests/actual/ (git-ignored) for diffing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from logdoctor.renderers import get_renderer
from tests.reportfactory import REPORTS

GOLD = Path(__file__).parent / "files"
ACTUAL = Path(__file__).parent.parent / "actual"
FORMATS = ("text", "markdown", "json", "github", "junit", "html")
EXT = {"text": "txt", "markdown": "md", "json": "json", "github": "gh.txt", "junit": "xml", "html": "html"}


def scrub(text: str) -> str:
    """Remove volatile bits: temporary directories and absolute paths."""
    text = re.sub(r"/tmp/[\w./-]*?/(?=[\w.-]+\.log)", "<tmp>/", text)
    return text.replace(str(Path.cwd()), "<cwd>")


def compare(name: str, actual: str) -> None:
    """Compare with the gold file, or rewrite it when LOGDOCTOR_UPDATE_GOLD is set."""
    gold = GOLD / name
    if os.environ.get("LOGDOCTOR_UPDATE_GOLD"):
        gold.parent.mkdir(parents=True, exist_ok=True)
        gold.write_text(actual, encoding="utf-8")
        return
    expected = gold.read_text(encoding="utf-8") if gold.exists() else None
    if expected != actual:
        ACTUAL.mkdir(parents=True, exist_ok=True)
        (ACTUAL / name).write_text(actual, encoding="utf-8")
        pytest.fail(f"{name} differs from its gold file; see tests/actual/{name}")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", sorted(REPORTS))
def test_gold(kind: str, fmt: str) -> None:
    renderer = get_renderer(fmt)(color=False, width=80)
    compare(f"{kind}.{EXT[fmt]}", scrub(str(renderer.render(REPORTS[kind]()))))


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_gold_verbose(fmt: str) -> None:
    renderer = get_renderer(fmt)(color=False, width=80, verbosity=1)
    compare(f"sorted.verbose.{EXT[fmt]}", renderer.render(REPORTS["sorted"]()))  # type: ignore[arg-type]


def test_scrub_replaces_tmp_dirs() -> None:
    assert scrub("/tmp/pytest-of-x/test_a0/train.log: ok") == "<tmp>/train.log: ok"
