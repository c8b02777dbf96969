"""The bounded step history of a followed run: recent rows in full, older rows as block aggregates.

Reduction (documented in docs/tail.md): the newest ``full_rows`` parsed rows are kept exactly as
parsed, so every detector sees them at full resolution. Older rows are folded into a summary of at
most ``max_blocks`` blocks (first/last step, row count, mean/min/max of the finite losses); when the
summary outgrows that, neighbouring blocks merge pairwise and the block size doubles. The heavy
analyses run on the full-resolution rows only: mixing resolutions would fake changepoints and
periodicities at the seam. Memory is therefore bounded whatever the length of the run.

Consecutive rows at one step keep their last write, as analyze's structure stage keeps them (a
repeated write, or a step counter that stopped advancing: ``stuck`` tracks those runs with the
structure stage's rule), so tail's row count is analyze's and a stuck counter costs no memory.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor.ingest.limits import ColumnBudget
from logdoctor.ingest.parsers.base import RESTART
from logdoctor.model import CANONICAL_COLUMNS, LINE_NO, LOSS, STEP
from logdoctor.structure.stuck import StuckTracker

_SUMMARY_SCHEMA = {
    "step_first": pl.Int64,
    "step_last": pl.Int64,
    "rows": pl.Int64,
    "loss_sum": pl.Float64,
    "loss_n": pl.Int64,
    "loss_min": pl.Float64,
    "loss_max": pl.Float64,
}


class History:
    """Append-only parsed rows (file order) with a bounded footprint."""

    def __init__(self, *, full_rows: int = 200_000, max_blocks: int = 4096, max_evals: int = 10_000) -> None:
        self.full_rows = full_rows
        self.max_blocks = max_blocks
        self.max_evals = max_evals
        self.block = max(1, full_rows // 64)
        self.rows_total = 0
        self._chunks: list[pl.DataFrame] = []
        self._n_full = 0
        self._evals: list[pl.DataFrame] = []
        self.summary = pl.DataFrame(schema=_SUMMARY_SCHEMA)
        #: rows replaced by a later row at the same step (the one just after them in the file)
        self.repeats = 0
        self.stuck = StuckTracker()
        self._last_step: int | None = None
        #: the extra columns kept over all chunks (each chunk's parser keeps at most MAX_KEYS)
        self._columns = ColumnBudget(lambda c: c in CANONICAL_COLUMNS or c == RESTART)

    @property
    def n_full(self) -> int:
        """Rows held at full resolution."""
        return self._n_full

    @property
    def rows_summarized(self) -> int:
        """Rows folded into the block summary."""
        return self.rows_total - self._n_full

    def append(self, table: pl.DataFrame, evals: pl.DataFrame | None = None) -> None:
        """Add newly parsed rows (and evaluation rows) in file order."""
        if table.height and STEP in table.columns:
            table = self._later_write_wins(self._columns.cut(table))
        if table.height:
            self._chunks.append(table)
            self._n_full += table.height
            self.rows_total += table.height
            if self._n_full > self.full_rows + max(1, self.full_rows // 4):
                self._compact()
            elif len(self._chunks) > 64:
                self._chunks = [self.frame()]
        if evals is not None and evals.height:
            self._evals.append(evals)
            if sum(e.height for e in self._evals) > 2 * self.max_evals:
                self._evals = [self.evals()]

    def _later_write_wins(self, table: pl.DataFrame) -> pl.DataFrame:
        """Drop each row that the next row (this chunk's or the previous chunk's last) repeats the
        step of, and feed the stuck-counter tracker."""
        step = table[STEP].to_numpy()
        line = table[LINE_NO].to_numpy() if LINE_NO in table.columns else None
        self.stuck.feed(step, line)
        keep = np.ones(step.size, dtype=bool)
        keep[:-1] = step[1:] != step[:-1]
        if self._last_step is not None and int(step[0]) == self._last_step and self._chunks:
            self._chunks[-1] = self._chunks[-1].head(-1)
            if not self._chunks[-1].height:
                self._chunks.pop()
            self._n_full -= 1
            self.rows_total -= 1
            self.repeats += 1
        self._last_step = int(step[-1])
        self.repeats += int((~keep).sum())
        return table if keep.all() else table.filter(pl.Series(keep))

    def frame(self) -> pl.DataFrame:
        """All full-resolution rows, in file order."""
        if not self._chunks:
            return pl.DataFrame()
        if len(self._chunks) > 1:
            self._chunks = [pl.concat(self._chunks, how="diagonal_relaxed")]
        return self._chunks[0]

    def tail(self, n: int) -> pl.DataFrame:
        """The last ``n`` full-resolution rows, in file order."""
        picked: list[pl.DataFrame] = []
        have = 0
        for chunk in reversed(self._chunks):
            picked.append(chunk)
            have += chunk.height
            if have >= n:
                break
        if not picked:
            return pl.DataFrame()
        out = picked[0] if len(picked) == 1 else pl.concat(picked[::-1], how="diagonal_relaxed")
        return out.tail(n)

    def evals(self) -> pl.DataFrame:
        """The newest ``max_evals`` evaluation rows."""
        if not self._evals:
            return pl.DataFrame()
        return pl.concat(self._evals, how="diagonal_relaxed").tail(self.max_evals)

    def _compact(self) -> None:
        full = self.frame()
        drop = full.height - self.full_rows
        self._chunks = [full.tail(self.full_rows)]
        self._n_full = self.full_rows
        self.summary = pl.concat([self.summary, _blocks(full.head(drop), self.block)])
        while self.summary.height > self.max_blocks:
            self.summary = _merge_pairs(self.summary)
            self.block *= 2


def _blocks(rows: pl.DataFrame, size: int) -> pl.DataFrame:
    finite = pl.when(pl.col(LOSS).is_finite()).then(pl.col(LOSS))
    return (
        rows.sort(LINE_NO)
        .with_row_index("_i")
        .group_by(pl.col("_i") // size, maintain_order=True)
        .agg(
            pl.col(STEP).first().alias("step_first"),
            pl.col(STEP).last().alias("step_last"),
            pl.len().cast(pl.Int64).alias("rows"),
            finite.sum().alias("loss_sum"),
            finite.count().cast(pl.Int64).alias("loss_n"),
            finite.min().alias("loss_min"),
            finite.max().alias("loss_max"),
        )
        .drop("_i")
        .cast(_SUMMARY_SCHEMA)  # type: ignore[arg-type]
    )


def _merge_pairs(summary: pl.DataFrame) -> pl.DataFrame:
    return (
        summary.with_row_index("_i")
        .group_by(pl.col("_i") // 2, maintain_order=True)
        .agg(
            pl.col("step_first").first(),
            pl.col("step_last").last(),
            pl.col("rows").sum(),
            pl.col("loss_sum").sum(),
            pl.col("loss_n").sum(),
            pl.col("loss_min").min(),
            pl.col("loss_max").max(),
        )
        .drop("_i")
    )


def overview(summary: pl.DataFrame, recent: pl.DataFrame) -> tuple[float | None, float | None]:
    """The loss at the start of the run (the first block's mean once summarised) and its minimum
    over the whole run, from the summary blocks and the recent rows (finite values only).
    """
    loss = recent[LOSS] if recent.height and LOSS in recent.columns else pl.Series([], dtype=pl.Float64)
    fin = loss.filter(loss.is_finite()).cast(pl.Float64).to_list()
    blocks = summary.filter(pl.col("loss_n") > 0)
    first = blocks["loss_sum"][0] / blocks["loss_n"][0] if blocks.height else (fin[0] if fin else None)
    mins = [*blocks["loss_min"].to_list(), *fin]
    return (float(first) if first is not None else None, float(min(mins)) if mins else None)
