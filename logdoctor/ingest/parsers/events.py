"""Failure events of a text log: every line the lexicon names (a crash, a stop, a recovery, the end) as LogEvents."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.lexicon import (
    BY_NAME,
    FATAL,
    LAUNCHER_STOP,
    PER_LINE,
    RECOVERED,
    SIGNALS,
    STOP,
    TRACEBACK,
    Signal,
)
from logdoctor.ingest.parsers.lines import LINE, LINE_NO
from logdoctor.ingest.parsers.relaunch import relaunched
from logdoctor.ingest.parsers.screen import Lines
from logdoctor.model import LogEvent

#: Lines of one failure block are at most this many lines apart (a traceback's frames).
BLOCK_GAP = 60
#: Python's words between chained tracebacks: the next traceback is the same failure's.
CHAINED = r"During handling of the above exception|The above exception was the direct cause"
_PATTERNS = [s.pattern for s in SIGNALS] + [TRACEBACK, CHAINED]
_ANY = "|".join(f"(?:{p})" for p in _PATTERNS)
_BLOCK_KINDS = [s for s in SIGNALS if s.role in (FATAL, STOP)]

#: A DataLoader worker's traceback that the main process re-raises (torch/_utils.py ExceptionWrapper:
#: ``Caught ValueError in DataLoader worker process 0.`` then ``Original Traceback (most recent call
#: last):``): the same failure, not another process's.
WORKER_TRACEBACK = r"^\s*Original Traceback \(most recent call last\)"

#: One matched line: (line number, text, its signal or None for a traceback's or a chain's line).
Hit = tuple[int, str, Signal | None]


#: A traceback inside a warning, info or debug record (glog ``W0618 21:57:02``, ``WARNING:``) was
#: logged by a program that caught the exception (torch._dynamo's fallback): no failure.
LOGGED = re.compile(r"\b[WID]\d{4} \d\d:\d\d:\d\d|\b(?:WARNING|WARN|INFO|DEBUG)\b.*Traceback \(most")


def _opens(hit: Hit) -> bool:
    return "Traceback (most recent call last)" in hit[1] and LOGGED.search(hit[1]) is None


def _signal(text: str) -> Signal | None:
    return next((s for s in SIGNALS if re.search(s.pattern, text)), None)  # re caches the compiled patterns


def _event(sig: Signal, line: int, text: str, block_line: int, traceback: bool = False) -> LogEvent:
    said = text.strip()[:120]
    cause = f"{sig.cause}: {said}" if sig.name == "exception" else sig.cause
    return LogEvent(sig.name, cause, line, said, block_line, sig.role, traceback)


def _block_event(block: list[Hit]) -> LogEvent | None:
    """The one failure a block states: its most specific fatal or stop kind, at the last line that
    says it (a traceback's exception line); a traceback whose exception line is missing is an
    exception. None when the block only details a failure the framework says it recovered from
    (fairseq's ``OOM: Ran out of memory`` before ``attempting to recover from OOM``)."""
    traceback = any(_opens(h) for h in block)
    if not traceback and any(sig is not None and sig.role == RECOVERED for _, _, sig in block):
        return None
    fatal = [i for i, (_, _, s) in enumerate(block) if s is not None and s.role == FATAL]
    ranked = [
        (_BLOCK_KINDS.index(s), -i)
        for i, (_, text, s) in enumerate(block)
        if s in _BLOCK_KINDS and not (re.search(LAUNCHER_STOP, text) and any(j > i for j in fatal))
    ]  # a launcher stopping its other workers before a crash's lines: the crash is the cause
    if not ranked:
        if not traceback:
            return None
        line, text, _ = next(h for h in block if _opens(h))
        return _event(BY_NAME["exception"], line, text, line, True)
    rank, neg = min(ranked)
    line, text, _ = block[-neg]
    first = next(n for n, _, s in block if s is None or s.role not in PER_LINE)  # its own lines, not a recovery's
    return _event(_BLOCK_KINDS[rank], line, text, first, traceback)


def _closes(hit: Hit) -> bool:
    return hit[2] is not None and hit[2].role in (FATAL, STOP)


def _blocks(hits: list[Hit], rows: np.ndarray, headers: np.ndarray) -> list[list[Hit]]:
    """Hits within ``BLOCK_GAP`` lines of each other and with no training row or run header
    (``headers``: a new process's banner) between them; a traceback that opens right after another
    one closed (no chaining words between, not a worker's re-raised traceback) is another failure,
    of another process."""
    blocks: list[list[Hit]] = []
    at = [h[0] for h in hits]
    before = np.searchsorted(rows, at) if rows.size else np.zeros(len(hits), dtype=int)
    started = np.searchsorted(headers, at) if headers.size else np.zeros(len(hits), dtype=int)
    for i, hit in enumerate(hits):
        again = (
            _opens(hit)
            and not re.search(WORKER_TRACEBACK, hit[1])
            and bool(blocks)
            and _closes(blocks[-1][-1])
            and any(_opens(h) for h in blocks[-1])
        )
        again = again or (i > 0 and started[i] != started[i - 1])
        if blocks and hit[0] - blocks[-1][-1][0] <= BLOCK_GAP and before[i] == before[i - 1] and not again:
            blocks[-1].append(hit)
        else:
            blocks.append([hit])
    return blocks


def scan_events(
    lines: pl.DataFrame, rows: np.ndarray | None = None, headers: tuple[int, ...] = ()
) -> tuple[LogEvent, ...]:
    """Every failure event of a text log (columns ``line_no`` and ``line``), in file order.

    A line of a per-line class (a recovery, early stopping, the end of training) is one event.
    Lines that name a failure or a stop (or open a traceback), within ``BLOCK_GAP`` lines of each
    other and with no training row (``rows``: their line numbers, sorted) between them, are one
    block (a run header, ``headers``: a new process's banner, starts another), and each block
    states one event (``_block_event``). Which event ended which run, and what one inside a run
    means, is structure's decision.
    """
    if lines.height == 0 or LINE not in lines.columns:
        return ()
    if not Lines.of(lines[LINE]).may_match_any(_PATTERNS):
        return ()  # _ANY is these patterns' alternation
    found = lines.filter(pl.col(LINE).str.contains(_ANY)).select(LINE_NO, LINE)
    hits: list[Hit] = [(int(n), str(t), _signal(str(t))) for n, t in found.iter_rows()]
    hits = [h for h in hits if h[2] is not None or _opens(h) or re.search(CHAINED, h[1])]
    out: list[LogEvent] = []
    ended: list[tuple[LogEvent, int]] = []
    rows = np.sort(rows) if rows is not None else np.empty(0, dtype=np.int64)
    for block in _blocks(hits, rows, np.asarray(sorted(headers), dtype=np.int64)):
        out += [_event(s, n, t, n) for n, t, s in block if s is not None and s.role in PER_LINE]
        ev = _block_event(block)
        ended += [(ev, block[-1][0])] if ev is not None else []
    again = relaunched(lines, rows, [(e.block_line, last) for e, last in ended])
    out += [dataclasses.replace(e, relaunched=True) if r else e for (e, _), r in zip(ended, again, strict=True)]
    return tuple(sorted(out, key=lambda e: e.line))


def failures(events: tuple[LogEvent, ...]) -> tuple[LogEvent, ...]:
    """The events that stop a process (fatal or deliberate blocks), in file order."""
    return tuple(e for e in events if e.role in (FATAL, STOP))


def ending_after(events: tuple[LogEvent, ...], last_line: float | None, stop: int | None = None) -> LogEvent | None:
    """The failure that ended a run whose last training row is on ``last_line``: the most specific
    failure block after it (and before ``stop``, the next run's first line); None when none follows."""
    if last_line is None:
        return None
    after = [e for e in failures(events) if e.line > last_line and (stop is None or e.line < stop)]
    if not after:
        return None
    names = [k.name for k in _BLOCK_KINDS]
    return min(after, key=lambda e: (names.index(e.kind) if e.kind in names else len(names), -e.line))
