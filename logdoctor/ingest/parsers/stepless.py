"""Launches that logged no step and printed no failure: the log's opening lines printed again before any row.

A program prints the same start-up lines each time it is launched: a banner, then its config dump
(PaddleOCR's ``Architecture :`` / ``Global :`` dump by ppocr/utils/utility.py ``print_dict``, SwAV's
``Initialized logger`` and arguments, fairseq's config dict). Before the log's first training row,
each place where the log's opening lines (its first ``OPENING`` distinct start-up lines, in their
order) are printed again starts another launch, and the launch before it, when it stated the run's
plan (its config dump: markers.py ``plans``), logged no step. The plan keeps out the processes of
one launch that each print the same opening (a launcher's ranks building a JIT extension). One that
printed a failure is events.py's (a failure block, relaunched), not listed here again. A process
that dumps its config twice (detectron2: the config file, then the full config) does not print its
opening banner twice, so it is one launch. Lines are compared with their digits read as 0
(timestamps, pids) and only when at least ``MIN_CHARS`` long (relaunch.py).
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


def _starts(norm: list[tuple[int, str]]) -> list[int]:
    """The lines where the log's opening sequence (its first ``OPENING`` distinct lines) is printed."""
    opening = list(dict.fromkeys(n for _, n in norm))[:OPENING]
    if len(opening) < OPENING:
        return []
    texts = [n for _, n in norm]
    k = len(opening)
    return [norm[i][0] for i in range(len(norm) - k + 1) if texts[i : i + k] == opening]


def stepless_launches(
    lines: pl.DataFrame, rows: np.ndarray | None, plans: tuple[int, ...], failed: tuple[int, ...] = ()
) -> tuple[LogEvent, ...]:
    """One event per launch before the log's first training row (``rows``: their line numbers)
    that stated the run's plan (``plans``: the lines of its statements, markers.py), that another
    launch followed before any step, and that printed no failure (``failed``: the lines of failure
    events); file order."""
    if rows is None or rows.size == 0 or lines.height == 0:
        return ()
    first = int(rows.min())
    pre = lines.filter(pl.col(LINE_NO) < first).select(
        LINE_NO, pl.col(LINE).str.strip_chars().str.replace_all(r"\d+", "0").alias("n"), pl.col(LINE)
    )
    pre = pre.filter(pl.col("n").str.len_chars() >= MIN_CHARS)
    norm = [(int(a), str(b)) for a, b in pre.select(LINE_NO, "n").iter_rows()]
    starts = _starts(norm)
    if len(starts) < 2:
        return ()
    text = dict(zip(pre[LINE_NO].to_list(), pre[LINE].to_list(), strict=True))
    out: list[LogEvent] = []
    for here, nxt in itertools.pairwise(starts):
        if any(here <= f < nxt for f in failed) or not any(here <= p < nxt for p in plans):
            continue
        last = max((line for line, _ in norm if here <= line < nxt), default=here)
        out.append(
            LogEvent(
                kind=KIND,
                cause=CAUSE,
                line=last,
                text=str(text.get(last, "")).strip()[:120],
                block_line=here,
                role=STOP,
                relaunched=True,
            )
        )
    return tuple(out)
