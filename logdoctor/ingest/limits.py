"""Limits on the dimensions of an input that real logs never reach, and the notice when one bites.

Each limit has a default far above what the real corpus holds (``tests/unit/test_limits.py``
measures the corpus under ../shared/reallogs against them):

* ``MAX_KEYS``: distinct metric names kept per log. The 45 real logs hold at most 55 columns
  (training and evaluation tables together: fairseq's HuBERT pretraining log), most under 20;
  a log whose names change from line to line (a key with a counter in it) would otherwise build
  one column per line (10,000 names: 17 GB). The most frequent names are kept, and the names
  that every log needs (step, loss, the canonical columns) always are; once the budget bites, a
  name on fewer than ``MIN_SHARE`` of the records is dropped too (it is the explosion itself, and
  would cost a column of nulls as long as the log).
* ``MAX_RUNS``: runs listed from one folder or fleet address (a ``wandb/`` folder, a TensorBoard log
  dir, a remote prefix), and ``MAX_EVENT_FILES``: event files read for one TensorBoard run. Past
  either the input is refused in one line that says how many there are and how to name fewer; a
  listing is never cut short silently (the runs or files left out would be analysed by nobody).
* nesting: a JSON or TOML document nested past what Python's parsers read (about 1,000 levels;
  real trainer states and configs nest under 10) is refused in one line (``TooDeep``, exit 2)
  instead of ending the command in a RecursionError.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

import polars as pl

from logdoctor.errors import InputError

T = TypeVar("T")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Distinct metric names kept per log (the most frequent ones).
MAX_KEYS = 256
#: Past the budget, a name is kept only when at least this share of the records carry it.
MIN_SHARE = 0.01


#: Runs one folder or fleet address may stand for (each is analysed, one at a time).
MAX_RUNS = 1_000_000
#: Event files one TensorBoard run may hold (one per launch or writer: real runs hold a handful).
MAX_EVENT_FILES = 100_000


def within(name: str, found: list[T], limit: int, what: str) -> list[T]:
    """``found`` unchanged when it holds at most ``limit`` items.

    Raises:
        InputError: more than ``limit``, with the count and how to name fewer.
    """
    if len(found) > limit:
        raise InputError(
            f"{name}: {len(found):,} {what}, more than the {limit:,} one input may stand for: "
            "name fewer (a sub-folder or a glob)"
        )
    return found


class TooDeep(ValueError):
    """A document nested deeper than Python's parsers read."""


def keys_note(kept: int, total: int) -> str:
    """``kept the 256 most frequent of 10,000 metric names (the others are dropped)``."""
    return f"kept the {kept:,} most frequent of {total:,} metric names (the others are dropped)"


def keep_keys(
    counts: Mapping[str, int], always: Collection[str] = (), limit: int = MAX_KEYS, records: int = 0
) -> tuple[set[str], str | None]:
    """(the names to keep, the notice or None): every name when there are at most ``limit``, else
    the names in ``always`` and the most frequent others (ties in first-seen order) up to ``limit``,
    each on at least ``MIN_SHARE`` of the ``records`` (when given): past the budget, names that
    rare are the explosion itself, and each would cost a column of nulls as long as the log."""
    if len(counts) <= limit:
        return set(counts), None
    must = [k for k in counts if k in always]
    room = max(0, limit - len(must))
    floor = MIN_SHARE * records
    ranked = sorted((k for k in counts if k not in always and counts[k] >= floor), key=lambda k: -counts[k])[:room]
    kept = set(must) | set(ranked)
    return kept, keys_note(len(kept), len(counts))


class KeyBudget:
    """The key budget over records (dicts) that arrive in batches: each batch keeps the names that
    ``always`` accepts and the most frequent others over every batch so far, up to ``limit``."""

    def __init__(self, always: Callable[[str], bool], limit: int = MAX_KEYS) -> None:
        self.always = always
        self.limit = limit
        self.counts: Counter[str] = Counter()
        self.records = 0
        self.note: str | None = None

    def prune(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``rows`` with only the kept names (the rows themselves when every name is kept)."""
        for row in rows:
            self.counts.update(row.keys())
        self.records += len(rows)
        kept, note = keep_keys(self.counts, {k for k in self.counts if self.always(k)}, self.limit, self.records)
        if note is None:
            return rows
        self.note = note
        return [{k: v for k, v in row.items() if k in kept} for row in rows]


class ColumnBudget:
    """The key budget over tables that arrive one after another (the chunks of a streamed or
    followed log, each already cut to ``limit`` names by its parser): the names ``always`` accepts,
    and the first ``limit`` other names seen, so that their union does not grow with the chunks."""

    def __init__(self, always: Callable[[str], bool], limit: int = MAX_KEYS) -> None:
        self.always = always
        self.limit = limit
        self.extra: set[str] = set()

    def cut(self, table: pl.DataFrame) -> pl.DataFrame:
        """``table`` without the columns past the budget."""
        for c in table.columns:
            if len(self.extra) < self.limit and not self.always(c):
                self.extra.add(c)
        keep = [c for c in table.columns if c in self.extra or self.always(c)]
        return table if len(keep) == table.width else table.select(keep)


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (which no UTF-8 sink can write)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate (``"\\udcff"`` from JSON or a non-UTF-8 file name) made
    U+FFFD; other text unchanged."""
    if not has_surrogate(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def clean_value(value: Any) -> Any:
    """``value`` (decoded JSON) with its strings and keys made ``clean_text``; an explicit stack, so
    any depth is walked."""
    if isinstance(value, str):
        return clean_text(value)
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        parent, key = stack.pop()
        item = parent[key]
        if isinstance(item, str):
            parent[key] = clean_text(item)
        elif isinstance(item, list):
            stack.extend((item, i) for i in range(len(item)))
        elif isinstance(item, dict):
            fixed = {clean_text(k): v for k, v in item.items()} if any(map(has_surrogate, item)) else item
            parent[key] = fixed
            stack.extend((fixed, k) for k in fixed)
    return root[0]


def loads(text: str | bytes) -> Any:
    """``json.loads`` that reads any valid JSON as data: lone surrogates become U+FFFD; a
    document nested past Python's stack raises ``TooDeep`` (a ValueError, as a JSON error is).

    Raises:
        ValueError: not JSON, or ``TooDeep``.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise TooDeep("nested too deeply to read") from None
    needs = b"\\u" in text if isinstance(text, bytes) else "\\u" in text
    return clean_value(value) if needs else value
