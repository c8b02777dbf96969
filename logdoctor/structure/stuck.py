"""Stuck step counters: far more records in a row at one step than the log's other steps repeat.

Rule 0 of the structure stage, applied to the records in file order before duplicates and resumes:
a run of consecutive records that carry the same step is **stuck** when it holds at least
``max(MIN_STUCK_RECORDS, STUCK_FACTOR x typical)`` records, ``typical`` being the median length of
the log's other runs (1 for a log that writes each step once, k for k ranks or micro-batches that
each write a step). A log whose every record carries one step (at least ``MIN_STUCK_RECORDS`` of
them) has a counter that never advanced. Each stuck run is collapsed to its last record (the later
write wins, as for any repeated step) and reported (LD008) instead of being counted as duplicates
or as steps that "went backwards".

The null behind the numbers: in the 41 real public logs of tests' reallogs folder the longest run of
records at one step is 2 (ms-swift writes every record twice; measured with each parser, file
order). Healthy logs that repeat a step more (ranks or micro-batches writing the same step) do so by
a steady factor, which ``typical`` absorbs; 64 records leaves a wide margin above both.
"""

from __future__ import annotations

import numpy as np

from logdoctor.model import StuckCounter

MIN_STUCK_RECORDS = 64
STUCK_FACTOR = 16


def limit(typical: float) -> int:
    """Records in a row at one step from which the counter is stuck, given the typical run length."""
    return max(MIN_STUCK_RECORDS, int(np.ceil(STUCK_FACTOR * max(typical, 1.0))))


def runs(step: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start index, length) of each run of equal consecutive steps."""
    if step.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(step[1:] != step[:-1]) + 1))
    return starts, np.diff(np.concatenate((starts, [step.size])))


def typical_run(lengths: np.ndarray) -> float:
    """The median run length, leaving out the longest run (the stuck one, when there is one)."""
    if lengths.size < 2:
        return 1.0
    rest = np.delete(lengths, int(np.argmax(lengths)))
    return float(np.median(rest))


def _stuck_runs(step: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """(start, length) of each stuck run, and whether the log holds no other step."""
    starts, lengths = runs(step)
    whole = starts.size == 1
    cut = MIN_STUCK_RECORDS if whole else limit(typical_run(lengths))
    picked = np.flatnonzero(lengths >= cut) if starts.size else np.zeros(0, dtype=np.int64)
    return starts[picked], lengths[picked], whole


def find_stuck(step: np.ndarray, line: np.ndarray | None = None) -> tuple[StuckCounter, ...]:
    """The stuck runs of a log's records in file order (``line``: their file lines)."""
    starts, lengths, whole = _stuck_runs(step)
    out = []
    for a, n in zip(starts.tolist(), lengths.tolist(), strict=True):
        lines = (int(line[a]), int(line[a + n - 1])) if line is not None else (0, 0)
        out.append(StuckCounter(int(step[a]), n, lines[0], lines[1], whole))
    return tuple(out)


def collapse_mask(step: np.ndarray) -> np.ndarray:
    """True for the records to keep: all but the last record of each stuck run."""
    keep = np.ones(step.size, dtype=bool)
    for a, n in zip(*(x.tolist() for x in _stuck_runs(step)[:2]), strict=True):
        keep[a : a + n - 1] = False
    return keep


class StuckTracker:
    """The same rule for a followed log, fed in chunks with bounded state: the run in progress, a
    histogram of finished run lengths, and the longest finished runs of at least MIN_STUCK_RECORDS
    records (``keep`` of them); which of those are stuck is decided when asked, against the typical
    run length of everything read so far, as ``find_stuck`` decides it for a whole log."""

    def __init__(self, keep: int = 64) -> None:
        self.keep = keep
        self.step: int | None = None
        self.length = 0
        self.first_line = 0
        self.last_line = 0
        self._lengths: dict[int, int] = {}
        self._candidates: list[StuckCounter] = []

    def feed(self, step: np.ndarray, line: np.ndarray | None = None) -> None:
        """Add the steps (and file lines) of newly parsed records, in file order (vectorised: a
        healthy log's chunk is one run per record)."""
        starts, lengths = runs(step)
        if starts.size == 0:
            return
        lines = line if line is not None else np.zeros(step.size, dtype=np.int64)
        first = 0
        if int(step[0]) == self.step:  # the run in progress goes on
            self.length += int(lengths[0])
            self.last_line = int(lines[int(lengths[0]) - 1])
            first = 1
            if starts.size == 1:
                return
        self._finish()
        done = lengths[first:-1]  # runs that start and end in this chunk
        if done.size:
            values, counts = np.unique(done, return_counts=True)
            for v, c in zip(values.tolist(), counts.tolist(), strict=True):
                self._lengths[v] = self._lengths.get(v, 0) + c
            for i in (np.flatnonzero(done >= MIN_STUCK_RECORDS) + first).tolist():
                a, n = int(starts[i]), int(lengths[i])
                self._candidate(StuckCounter(int(step[a]), n, int(lines[a]), int(lines[a + n - 1])))
        a = int(starts[-1])
        self.step, self.length = int(step[a]), int(lengths[-1])
        self.first_line, self.last_line = int(lines[a]), int(lines[-1])

    def _candidate(self, run: StuckCounter) -> None:
        self._candidates = sorted([*self._candidates, run], key=lambda c: -c.records)[: self.keep]

    def _finish(self) -> None:
        if self.step is None:
            return
        if self.length >= MIN_STUCK_RECORDS:
            self._candidate(StuckCounter(self.step, self.length, self.first_line, self.last_line))
        self._lengths[self.length] = self._lengths.get(self.length, 0) + 1

    def _typical(self) -> float:
        """``typical_run`` of every run so far (the one in progress included), from the histogram."""
        hist = dict(self._lengths)
        hist[self.length] = hist.get(self.length, 0) + 1
        longest = max(hist)
        hist[longest] -= 1  # leave out the longest run, as typical_run does
        values = np.array(sorted(v for v, c in hist.items() if c))
        if values.size == 0:
            return 1.0
        cum = np.cumsum([hist[v] for v in values.tolist()])
        n = int(cum[-1])
        lo, hi = (values[np.searchsorted(cum, k, side="right")] for k in ((n - 1) // 2, n // 2))
        return float(lo + hi) / 2

    def counters(self) -> tuple[StuckCounter, ...]:
        """The stuck runs so far, the one in progress included, longest first."""
        if self.step is None or (self.length < MIN_STUCK_RECORDS and not self._candidates):
            return ()  # the usual answer, without the median
        whole = not self._lengths
        current = StuckCounter(self.step, self.length, self.first_line, self.last_line, whole)
        cut = MIN_STUCK_RECORDS if whole else limit(self._typical())
        found = [c for c in (*self._candidates, current) if c.records >= cut]
        return tuple(sorted(found, key=lambda c: -c.records))
