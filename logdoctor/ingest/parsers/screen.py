"""A cheap test that a regex cannot match any line of a small input, so that its polars query is skipped.

Each polars string query on a few hundred lines costs ~0.3-2 ms (the regex compiled, the query
planned), which is most of a small log's parse. A regex can only match a line that holds the
literals every match of it holds: ``^\\s*(\\d+) train (...)\\s*$`` needs `` train ``. ``needs``
reads those literals from the pattern (Python's own parser of the same syntax, alternatives as
"one of"), and ``Lines.may_match`` looks them up in the lines joined by newlines (a substring
search, microseconds). A False is certain: no line matches and the polars query would find
nothing; a True says nothing, and the query runs as before. Literals that must match in any case
are looked up only when the text is ASCII (polars' regex folds case the Unicode way: ``(?i)k``
matches the Kelvin sign). A pattern whose syntax the two regex engines may read differently
(POSIX classes, class set operations, Unicode classes, flags other than ``i``) has no literals
here, so it always runs.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import polars as pl

from logdoctor.ingest.parsers.screentable import NEEDS

#: Inputs above this many lines are not screened: the lookups scan the joined text once per literal
#: (~250 per parse), which grows with the text while a query's fixed cost does not. `pipeline.load`
#: of the general path, CPU, screen off -> on: 400 lines 104 -> 80 ms, 1000 lines even, 5000 lines
#: 96-108 -> 138-161 ms, 15k lines 209 -> 306-360 ms.
MAX_LINES = 1_000

#: Syntax the Rust regex crate reads otherwise than Python's re (or Python does not have): POSIX
#: classes, Unicode classes and escapes, class set operations, flags other than ``i``, and the word
#: boundaries ``\<``, ``\>``, ``\b{start}`` (literal ``<``, ``>``, ``{start}`` to Python).
_FOREIGN = re.compile(r"\[\[:|\\[pPxuUz<>]|\\b\{|&&|~~|--|\(\?(?![:i])")

# One requirement: ("lit", text, any case) | ("and", parts) | ("or", alternatives)
Need = tuple[object, ...]
_TRUE: Need = ("and", ())


def _seq(items: list[tuple[Any, Any]], icase: bool) -> Need:
    """What a sequence of parsed regex items requires: its runs of literals, and each mandatory part."""
    from re import _constants as c  # type: ignore[attr-defined]

    parts: list[Need] = []
    run: list[str] = []

    def close() -> None:
        if run:
            parts.append(("lit", "".join(run), icase))
            run.clear()

    for op, av in items:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        close()
        if op is c.SUBPATTERN:
            _group, add, remove, sub = av
            scoped = (icase or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
            parts.append(_seq(list(sub), scoped))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            low, _high, sub = av
            if low >= 1:
                parts.append(_seq(list(sub), icase))
        elif op is c.BRANCH:
            _none, alternatives = av
            options = [_seq(list(a), icase) for a in alternatives]
            if all(o != _TRUE for o in options):
                parts.append(("or", tuple(options)))
        # anything else (a class, ``.``, an anchor, a category) requires no literal
    close()
    parts = [p for p in parts if p != _TRUE]
    return ("and", tuple(parts)) if parts else _TRUE


def _nested_class(pattern: str) -> bool:
    """True when a character class holds an unescaped ``[`` (a nested class to Rust, a literal to Python)."""
    inside, i = False, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if not inside and ch == "[":
            inside = True
            i += 1
            if pattern[i : i + 1] == "^":
                i += 1
            if pattern[i : i + 1] == "]":  # a leading ``]`` is a literal in both
                i += 1
            continue
        if inside and ch == "[":
            return True
        if inside and ch == "]":
            inside = False
        i += 1
    return False


def needs(pattern: str) -> Need:
    """The literals every match of ``pattern`` holds, as a requirement (``("and", ())``: none known):
    the patterns the parsers screen are looked up in a table generated once (screentable.py, checked
    equal to ``derive`` by its test); any other pattern is derived here."""
    return NEEDS.get(pattern) or derive(pattern)


@functools.lru_cache(maxsize=512)
def derive(pattern: str) -> Need:
    """``needs`` read from the pattern with CPython's regex parser (~0.1 ms a pattern)."""
    try:  # CPython's own regex parser (3.11+); without it nothing is screened
        from re import _constants, _parser  # type: ignore[attr-defined]  # noqa: F401
    except ImportError:
        return _TRUE
    if _FOREIGN.search(pattern) or _nested_class(pattern):
        return _TRUE
    # a non-ASCII literal is the same character to both engines, but under case folding a non-ASCII
    # letter can match ASCII text (the Kelvin sign folds to 'k', the long s to 's'): screened only
    # where the pattern never folds case (Keras 3's progress bar ``━``)
    foreign = not pattern.isascii()
    if foreign and re.search(r"\(\?[a-zA-Z-]*i", pattern):
        return _TRUE
    try:
        parsed = _parser.parse(pattern)
    except (re.error, ValueError, OverflowError):
        return _TRUE
    if foreign and parsed.state.flags & re.IGNORECASE:
        return _TRUE
    return _seq(list(parsed), bool(parsed.state.flags & re.IGNORECASE))


@dataclass(frozen=True, slots=True)
class Lines:
    """The lines of one column, joined for literal lookups (``text``; ``lower`` when ASCII)."""

    text: str | None
    lower: str | None

    @classmethod
    def of(cls, lines: pl.Series, max_lines: int | None = None) -> Lines:
        """The lines of a String series; more than ``max_lines`` (default ``MAX_LINES``) are not screened."""
        if lines.len() > (MAX_LINES if max_lines is None else max_lines):
            return cls(None, None)
        text = "\n".join((lines.drop_nulls() if lines.null_count() else lines).to_list())
        return cls(text, text.lower() if text.isascii() else None)

    def may_match(self, pattern: str) -> bool:
        """False only when no line can match ``pattern``; True when some may."""
        return self.text is None or self._holds(needs(pattern))

    def contains(self, lines: pl.Series, pattern: str) -> bool:
        """True when some of ``lines`` (the series these were joined from, or one cut from it) match ``pattern``: its
        polars query runs only where ``may_match`` cannot rule the match out."""
        return self.may_match(pattern) and bool(lines.str.contains(pattern).any())

    def may_match_any(self, patterns: tuple[str, ...] | list[str]) -> bool:
        """False only when no line can match any of ``patterns`` (the regex ``(?:p1)|(?:p2)|...``)."""
        return any(self.may_match(p) for p in patterns)

    def _holds(self, need: Need) -> bool:
        kind = need[0]
        if kind == "lit":
            _kind, lit, icase = need
            if not icase:
                return lit in self.text  # type: ignore[operator]
            return self.lower is None or str(lit).lower() in self.lower
        if kind == "or":
            return any(self._holds(n) for n in need[1])  # type: ignore[attr-defined]
        return all(self._holds(n) for n in need[1])  # type: ignore[attr-defined]
