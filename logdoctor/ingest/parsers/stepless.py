"""Launches that logged no step and printed no failure: the log's opening lines printed again, with no row between.

A program prints the same start-up lines each time it is launched: a banner, then its config dump
(PaddleOCR's ``Architecture :`` / ``Global :`` dump by ppocr/utils/utility.py ``print_dict``, SwAV's
``Initialized logger`` and arguments, fairseq's config dict). Each place where the log's opening
lines (its first ``OPENING`` distinct start-up lines before its first training row, in their order)
are printed again starts another launch, before the first row or between two launches that trained (not
after the last row: an evaluation-only launch, or one still starting, has not stopped),
and the launch before it, when it stated the run's plan (its config dump: markers.py ``plans``) and
logged no row, logged no step. The plan keeps out the processes of one launch that each print the
same opening (a launcher's ranks building a JIT extension). One that printed a failure is events.py's
(a failure block, relaunched), not listed here again. A process that dumps its config twice
(detectron2: the config file, then the full config) does not print its opening banner twice, so it
is one launch. Lines are compared with their digits read as 0 (timestamps, pids) and only when at
least ``MIN_CHARS`` long (relaunch.py).
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.lexicon import STOP
from logdoctor.ingest.parsers.lines import LINE, LINE_NO
from logdoctor.ingest.parsers.relaunch import MIN_CHARS
from logdoctor.model import LogEvent

#: The event's class: a launch that logged no step and no failure (ended by the next launch).
KIND = "no_step_launch"
CAUSE = "it logged no training step and printed no error before the program was started again"
#: How many distinct opening lines, in order, mark a launch's start.
OPENING = 3


#: Lines after a candidate start that are read for the rest of the opening sequence.
WINDOW = 200


def _normalised(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame``'s start-up candidates: each line stripped, digits read as 0 (column ``n``), at least
    ``MIN_CHARS`` long."""
    norm = frame.select(LINE_NO, pl.col(LINE).str.strip_chars().str.replace_all(r"\d+", "0").alias("n"), pl.col(LINE))
    return norm.filter(pl.col("n").str.len_chars() >= MIN_CHARS)


def _starts(norm: list[tuple[int, str]], opening: list[str]) -> list[int]:
    """The lines where ``opening`` (the log's first ``OPENING`` distinct start-up lines) is printed."""
    texts = [n for _, n in norm]
    k = len(opening)
    return [norm[i][0] for i in range(len(norm) - k + 1) if texts[i : i + k] == opening]


def _later_starts(lines: pl.DataFrame, rows: np.ndarray, first: int, opening: list[str]) -> list[int]:
    """The lines between the first training row (``first``) and the last where ``opening`` is printed
    again (a launch after the last row is no launch between two that trained: an evaluation-only run,
    or one still starting, is not said to have stopped). Only
    lines holding the longest literal piece of the opening's first line (its digit-free run) are
    candidates, so a long log is searched by one substring scan, not normalised whole."""
    piece = max(opening[0].split("0"), key=len).strip()
    if len(piece) < MIN_CHARS // 2:
        return []
    after = lines.filter((pl.col(LINE_NO) > first) & (pl.col(LINE_NO) < int(rows.max())))
    found = after.filter(pl.col(LINE).str.contains(piece, literal=True))[LINE_NO].to_list()
    out: list[int] = []
    for line in found:
        if out and line < out[-1] + OPENING:
            continue
        window = after.filter((pl.col(LINE_NO) >= line) & (pl.col(LINE_NO) < line + WINDOW))
        window = window.filter(~pl.col(LINE_NO).is_in(pl.Series(rows).implode()))
        norm = [(int(a), str(b)) for a, b in _normalised(window).select(LINE_NO, "n").iter_rows()]
        if [n for _, n in norm[: len(opening)]] == opening:
            out.append(line)
    return out


def stepless_launches(
    lines: pl.DataFrame, rows: np.ndarray | None, plans: tuple[int, ...], failed: tuple[int, ...] = ()
) -> tuple[LogEvent, ...]:
    """One event per launch that logged no training row (``rows``: their line numbers), stated the
    run's plan (``plans``: the lines of its statements, markers.py), was followed by another launch
    and printed no failure (``failed``: the lines of failure events); file order. A launch starts
    where the log's opening lines (read before its first row) are printed: before the first row, or
    between two launches that trained."""
    if rows is None or rows.size == 0 or lines.height == 0:
        return ()
    first = int(rows.min())
    pre = _normalised(lines.filter(pl.col(LINE_NO) < first))
    norm = [(int(a), str(b)) for a, b in pre.select(LINE_NO, "n").iter_rows()]
    opening = list(dict.fromkeys(n for _, n in norm))[:OPENING]
    if len(opening) < OPENING:
        return ()
    starts = _starts(norm, opening)
    if not starts:
        return ()
    starts += _later_starts(lines, rows, first, opening)
    if len(starts) < 2:
        return ()
    ordered = np.sort(rows)
    out: list[LogEvent] = []
    for here, nxt in itertools.pairwise(starts):
        trained = np.searchsorted(ordered, nxt) > np.searchsorted(ordered, here)
        if trained or any(here <= f < nxt for f in failed) or not any(here <= p < nxt for p in plans):
            continue
        span = _normalised(lines.filter((pl.col(LINE_NO) >= here) & (pl.col(LINE_NO) < nxt)))
        last, text = (int(span[LINE_NO][-1]), str(span[LINE][-1])) if span.height else (here, "")
        out.append(
            LogEvent(
                kind=KIND,
                cause=CAUSE,
                line=last,
                text=text.strip()[:120],
                block_line=here,
                role=STOP,
                relaunched=True,
            )
        )
    return tuple(out)
