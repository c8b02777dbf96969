"""The text report's pieces, and their layout without rich when no colour is drawn.

console.py describes a report as a few kinds of pieces (a wrapped line, an indented paragraph, a
bullet, the facts grid, the verdict panel) and draws them with rich on a terminal. Without colour,
and when every character of every piece is one cell wide and not a blank other than the space
(``plain_ok``), ``layout`` lays them out here with rich's own rules for those cases (word wrap with
long words folded, a grid's column widths, the rounded panel), the same characters rich writes,
without importing rich (~25 ms of a small log's ``analyze``). tests/unit/test_plainlayout.py compares
the two on every fixture and real log and on generated text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Characters one cell wide to rich and not whitespace to Python's ``\\s`` (the space aside): printable
#: ASCII, Latin-1 and Latin Extended letters and signs (no soft hyphen), Greek, general punctuation
#: (no zero-width, bidirectional or separator characters), arrows, mathematical operators, box
#: drawing and block elements (the panel and the sparkline). The test checks each against rich.
_OTHER = re.compile(
    "[^\x20-\x7e\u00a1-\u00ac\u00ae-\u02ff\u0391-\u03a1\u03a3-\u03c9"
    "\u2010-\u2027\u2030-\u205e\u2190-\u21ff\u2200-\u22ff\u2500-\u259f]"
)
_WORD = re.compile(r"\s*\S+\s*")
_TRAILING = re.compile(r"\s+$")

Parts = tuple[tuple[str, str], ...]


class Line:
    """A paragraph wrapped at the width (rich ``Text``): its parts as (text, style), and a style for all."""

    __slots__ = ("parts", "style")

    def __init__(self, parts: Parts, style: str = "") -> None:
        self.parts = parts
        self.style = style

    @classmethod
    def of(cls, text: str, style: str = "") -> Line:
        return cls(((text, ""),), style)

    @property
    def text(self) -> str:
        return "".join(t for t, _ in self.parts)


class Indented:
    """A paragraph indented by two columns (rich ``Padding(Text(text), (0, 0, 0, 2))``)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class Bullet:
    """``lead`` then ``text``, whose wrapped lines hang under the text (a two-column rich grid)."""

    __slots__ = ("lead", "style", "text")

    def __init__(self, text: str, lead: str = "  - ", style: str = "") -> None:
        self.text = text
        self.lead = lead
        self.style = style


class Facts:
    """Label and value rows (a rich grid with two columns between them; labels bold, never wrapped)."""

    __slots__ = ("rows",)

    def __init__(self, rows: Sequence[tuple[str, str]]) -> None:
        self.rows = tuple(rows)


class Panel:
    """A rounded box the width of the page, titled at its top left, around lines and bullets."""

    __slots__ = ("items", "title")

    def __init__(self, title: str, items: Sequence[Line | Bullet]) -> None:
        self.title = title
        self.items = tuple(items)


Piece = Line | Indented | Bullet | Facts | Panel


def _texts(piece: Piece) -> list[str]:
    if isinstance(piece, Line):
        return [t for t, _ in piece.parts]
    if isinstance(piece, Indented):
        return [piece.text]
    if isinstance(piece, Bullet):
        return [piece.lead, piece.text]
    if isinstance(piece, Facts):
        return [t for row in piece.rows for t in row]
    return [piece.title, *(t for item in piece.items for t in _texts(item))]


def plain_ok(pieces: Sequence[Piece], width: int) -> bool:
    """Whether ``layout`` draws ``pieces`` as rich would: one-cell characters only, no empty grid
    cell, and room for the panel and the grids' first columns."""
    for piece in pieces:
        if any(_OTHER.search(t) for t in _texts(piece)):
            return False
        if isinstance(piece, Facts | Bullet | Panel):
            rows = (
                piece.rows
                if isinstance(piece, Facts)
                else [(piece.lead, piece.text)]
                if isinstance(piece, Bullet)
                else [(b.lead, b.text) for b in piece.items if isinstance(b, Bullet)]
            )
            if any(not a or not b or len(a) + 2 >= width - 4 for a, b in rows):
                return False
            if isinstance(piece, Facts) and not rows:
                return False
    return width > 8


def layout(pieces: Sequence[Piece], width: int) -> str:
    """The pieces one under the other at ``width`` columns, each line without trailing blanks, as
    rich prints them into a colourless console of that width (``plain_ok`` must hold)."""
    lines: list[str] = []
    for piece in pieces:
        lines.extend(_draw(piece, width))
    return "\n".join([*(line.rstrip() for line in lines), ""])


def _draw(piece: Piece, width: int) -> list[str]:
    if isinstance(piece, Line):
        return wrap(piece.text, width)
    if isinstance(piece, Indented):
        return ["  " + line for line in wrap(piece.text, width - 2)]
    if isinstance(piece, Bullet):
        return grid([(piece.lead, piece.text)], 0, width)
    if isinstance(piece, Facts):
        return grid(piece.rows, 2, width)
    return _panel(piece, width)


def wrap(text: str, width: int) -> list[str]:
    """``text`` word-wrapped at ``width`` with longer words folded, each line padded to ``width``
    (rich's ``divide_line`` and ``Text.wrap`` for one-cell characters)."""
    breaks: list[int] = []
    offset = 0
    position = 0
    match = _WORD.match(text, position)
    while match is not None:
        start, end = match.span()
        word = match.group(0)
        length = len(word.rstrip())
        if width - offset >= length:
            offset += len(word)
        elif length > width:
            folded = [word[i : i + width] for i in range(0, len(word), width)]
            for i, piece in enumerate(folded):
                if start:
                    breaks.append(start)
                if i == len(folded) - 1:
                    offset = len(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
        match = _WORD.match(text, end)
    out = []
    for a, b in zip([0, *breaks], [*breaks, len(text)], strict=True):
        line = text[a:b]
        if len(line) > width:
            blank = _TRAILING.search(line)
            if blank is not None:
                line = line[: len(line) - min(len(blank.group(0)), len(line) - width)]
        out.append(line[:width].ljust(width))
    return out


def grid(rows: Sequence[tuple[str, str]], gap: int, width: int) -> list[str]:
    """Rows of a rich grid of two columns: the first never wrapped and followed by ``gap`` blanks, the
    second folded into what is left of ``width`` (rich's ``Table._calculate_column_widths``)."""
    first = min(max(len(a) for a, _ in rows) + gap, width)
    second = min(max(len(b) for _, b in rows), width)
    if first + second > width:  # only the second column may shrink
        second -= min(first + second - width, second)
    out = []
    for label, value in rows:
        for i, line in enumerate(wrap(value, second)):
            out.append((label.ljust(first) if i == 0 else " " * first) + line)
    return out


def _panel(panel: Panel, width: int) -> list[str]:
    inner = width - 4
    title = f" {panel.title} "[: width - 4] if panel.title else ""  # rich: no title, a plain top
    out = ["╭─" + title + "─" * (width - 4 - len(title)) + "─╮"]
    for item in panel.items:
        drawn = wrap(item.text, inner) if isinstance(item, Line) else grid([(item.lead, item.text)], 0, inner)
        out.extend("│ " + line.ljust(inner) + " │" for line in drawn)
    out.append("╰" + "─" * (width - 2) + "╯")
    return out
