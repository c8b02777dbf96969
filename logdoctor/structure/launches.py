"""Launches that died before their first training row: the failures of a run's lines that belong to another process.

A process dies once. A failure block before a run's first row, followed by evidence that the
program was started again (a run header or resume line before the first row, or its start-up
lines printed again: ingest/parsers/relaunch.py), ended a launch that logged no step. After the
run's last row, the failures up to the first such evidence are the run's own (its failure; none
when a run header or resume line comes first); each group after it ended a later launch that
logged no step. A launch that logged no step and printed no failure (ingest/parsers/stepless.py) is
never the run's own ending: it started at its own first line. A failure without that evidence says
nothing of another launch (a caught exception, several ranks' messages of one death).
"""

from __future__ import annotations

from typing import NamedTuple

from logdoctor.ingest.parsers import stepless
from logdoctor.ingest.parsers.events import ending_after
from logdoctor.model import LogEvent


class Launches(NamedTuple):
    """A run's failures sorted by whose they are."""

    before: tuple[LogEvent, ...]
    own: tuple[LogEvent, ...]
    after: tuple[LogEvent, ...]


def _again(e: LogEvent, until: int, restarts: tuple[int, ...]) -> bool:
    """The program started again after ``e`` (and by line ``until``)."""
    return e.relaunched or any(e.line < r <= until for r in restarts)


def split_launches(failures: tuple[LogEvent, ...], first: int, last: float, restarts: tuple[int, ...]) -> Launches:
    """The failures (fatal or stop blocks, file order) of a run whose rows span lines ``first`` to
    ``last``: those that ended a launch before it (one each), its own after its last row, and the
    one that ended each later launch (the most specific of its group)."""
    before = tuple(e for e in failures if e.line < first and _again(e, first, restarts))
    groups: list[list[LogEvent]] = [[]]
    prev = last
    for e in (e for e in failures if e.line > last):
        if e.kind == stepless.KIND or any(prev < r < e.block_line for r in restarts):
            groups.append([])  # a launch started before this failure (a stepless one starts at its block)
        groups[-1].append(e)
        if e.relaunched:
            groups.append([])
        prev = e.line
    after = tuple(x for g in groups[1:] if g and (x := ending_after(tuple(g), 0)) is not None)
    return Launches(before, tuple(groups[0]), after)
