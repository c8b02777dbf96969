"""The screen's generated table (ingest/parsers/screentable.py) holds exactly what the regex parser
derives for every screened pattern, so looking a pattern up gives the same answer as reading it."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers import screen
from logdoctor.ingest.parsers.screentable import NEEDS
from tests.conftest import FIXTURES
from tests.unit.test_screen import SCREENED


def test_every_entry_equals_what_the_parser_derives() -> None:
    stale = [p for p, need in NEEDS.items() if need != screen.derive(p)]
    assert stale == [], "run `python scripts/screen_table.py`"


def test_the_table_holds_exactly_the_screened_patterns() -> None:
    assert list(NEEDS) == list(dict.fromkeys(SCREENED)), "run `python scripts/screen_table.py`"


def test_the_generator_writes_the_table_as_committed() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("screen_table", Path(__file__).parents[2] / "scripts/screen_table.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.table_source() == gen.TARGET.read_text()


@pytest.mark.parametrize("name", ["example.log", "structure/hf_console.log"])
def test_a_small_log_screens_only_tabled_patterns(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    asked: list[str] = []
    derive = screen.derive

    def spy(pattern: str) -> tuple[object, ...]:
        asked.append(pattern)
        return derive(pattern)

    monkeypatch.setattr(screen, "derive", spy)
    pipeline.load(str(FIXTURES / name))
    assert asked == []  # every pattern came from the table (a new one: add it to SCREENED and regenerate)
