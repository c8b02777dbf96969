"""The text report drawn without rich (renderers/plainlayout.py) is the same text rich draws: on
generated lines, bullets, grids and panels at many widths, and (tests/textlayout.py's ``render_text``)
on the report of every fixture and real log the text tests render."""

from __future__ import annotations

import random
import re
from unittest import mock

import pytest
from rich.cells import cell_len

from logdoctor.renderers import console
from logdoctor.renderers.console import ConsoleRenderer
from logdoctor.renderers.plainlayout import _OTHER, Bullet, Facts, Indented, Line, Panel, Piece, layout, plain_ok

#: the characters the generated text is made of: words, runs of spaces, and a few non-ASCII ones
ALPHABET = "abcdefghij  KLM0123456789.,:;-_/()[]|=%*ρσΔ·…→≤≥─│█▁é×±"


def _rich(pieces: list[Piece], width: int) -> str:
    with mock.patch.object(console, "plain_ok", lambda *_: False):
        return ConsoleRenderer(color=False, width=width)._print(pieces)


def _text(rng: random.Random, longest: int) -> str:
    words = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, longest))) for _ in range(rng.randint(1, 30))]
    return rng.choice(["", " ", "  "]) + rng.choice([" ", "  ", " "]).join(words) + rng.choice(["", " ", "   "])


def _pieces(rng: random.Random) -> list[Piece]:
    longest = rng.choice([3, 8, 20, 90])
    bullet = Bullet(_text(rng, longest), rng.choice(["  - ", "- ", "hint: "]), rng.choice(["", "dim"]))
    return [
        Line.of(_text(rng, longest), style=rng.choice(["", "bold"])),
        Line(((rng.choice(["", "WARNING  "]), "bold"), (_text(rng, longest), ""))),
        Indented(_text(rng, longest)),
        bullet,
        Facts([(rng.choice(["steps", "NaN/inf loss", "log"]), _text(rng, longest)) for _ in range(rng.randint(1, 4))]),
        Panel(rng.choice(["logdoctor: ", ""]) + _text(rng, 12).strip(), [Line.of(_text(rng, longest)), bullet]),
    ]


@pytest.mark.parametrize("seed", range(40))
def test_generated_pieces_are_drawn_as_rich_draws_them(seed: int) -> None:
    rng = random.Random(seed)
    pieces = _pieces(rng)
    for width in (rng.randint(30, 60), rng.randint(61, 130)):
        if plain_ok(pieces, width):
            assert layout(pieces, width) == _rich(pieces, width)


def test_the_generated_pieces_are_mostly_drawn_without_rich() -> None:
    drawn = sum(plain_ok(_pieces(random.Random(seed)), 80) for seed in range(40))
    assert drawn >= 30


def test_every_character_let_through_is_one_cell_and_no_blank_but_the_space() -> None:
    allowed = [chr(c) for c in range(0x3000) if not _OTHER.match(chr(c))]
    assert len(allowed) > 1000
    assert [c for c in allowed if cell_len(c) != 1] == []
    assert [c for c in allowed if re.match(r"\s", c) and c != " "] == []


@pytest.mark.parametrize(
    "text", ["wide 漢字", "zero\u200bwidth", "e\u0301", "tab\there", "nbsp\u00a0", "line\nbreak", "😀"]
)
def test_other_characters_are_left_to_rich(text: str) -> None:
    assert not plain_ok([Line.of(text)], 80)
    assert not plain_ok([Panel("logdoctor: x", [Bullet(text)])], 80)


@pytest.mark.parametrize("width", [20, 80])
def test_empty_texts_are_drawn_as_rich_draws_them(width: int) -> None:
    for pieces in ([Line.of("")], [Indented("")], [Panel("", [Line.of("")])], [Panel("t", [Line.of(" ")])]):
        assert plain_ok(pieces, width)
        assert layout(pieces, width) == _rich(pieces, width)  # type: ignore[arg-type]


def test_empty_grid_cells_and_narrow_pages_are_left_to_rich() -> None:
    assert not plain_ok([Bullet("")], 80)
    assert not plain_ok([Facts([("steps", "")])], 80)
    assert not plain_ok([Facts([])], 80)
    assert not plain_ok([Bullet("x", "a very long lead of a bullet ")], 20)


def test_colour_is_always_drawn_with_rich() -> None:
    with mock.patch.object(console, "layout", side_effect=AssertionError("plain layout used")):
        out = ConsoleRenderer(color=True, width=80)._print([Line.of("hello", style="bold")])
    assert "\x1b[1m" in out
