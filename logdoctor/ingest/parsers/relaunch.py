"""Whether a program was started again after a failure: start-up lines printed before it printed again after it."""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.lines import LINE, LINE_NO

#: Lines looked at on each side of a failure block (a launch's start-up banner and config dump).
WINDOW = 400
#: A start-up line is at least this long (digits read as 0: timestamps and pids differ between launches).
MIN_CHARS = 12
#: Distinct lines that must be printed again: one repeated line may be a periodic warning.
MIN_REPEATED = 2
#: A traceback's frame line (``File "x.py", line 3, in f``) or its caret line.
_FRAME = r'File "|^\s*[~^]+\s*$|\^\^\^'


def _once(frame: pl.DataFrame) -> set[str]:
    """The normalised lines printed exactly once in ``frame``."""
    counts = frame.group_by("n").len()
    return set(counts.filter(pl.col("len") == 1)["n"].to_list())


def relaunched(lines: pl.DataFrame, rows: np.ndarray, spans: list[tuple[int, int]]) -> list[bool]:
    """Per failure block (``spans``: its first and last line, file order): True when at least
    ``MIN_REPEATED`` distinct lines, each printed once in the ``WINDOW`` lines before the block or
    in the first ``WINDOW`` lines after the previous block (the log's start for the first), are
    each printed once again in the ``WINDOW`` lines after it (before the next block): the program
    started again. Training rows (``rows``) are not start-up lines."""
    if not spans:
        return []
    norm = lines.select(pl.col(LINE_NO), pl.col(LINE).str.strip_chars().str.replace_all(r"\d+", "0").alias("n")).filter(
        (pl.col("n").str.len_chars() >= MIN_CHARS)
        & ~pl.col(LINE_NO).is_in(pl.Series(rows).implode())
        & ~pl.col("n").str.contains(_FRAME)  # a traceback's frames repeat in every traceback
    )
    out = []
    for i, (first, last) in enumerate(spans):
        start = spans[i - 1][1] + 1 if i else 0  # where this process's lines began, at the latest
        lo = max(first - WINDOW, start)
        hi = min(last + WINDOW, spans[i + 1][0] - 1 if i + 1 < len(spans) else last + WINDOW)
        line = pl.col(LINE_NO)
        # its start-up lines: the last WINDOW lines before the block and the first WINDOW after
        # its start (a long config dump puts the banner more than WINDOW lines before a crash)
        before = _once(norm.filter(((line >= lo) | (line < start + WINDOW)) & (line >= start) & (line < first)))
        after = _once(norm.filter((line > last) & (line <= hi)))
        out.append(len(before & after) >= MIN_REPEATED)
    return out
