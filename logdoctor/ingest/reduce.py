"""Reduce a stream of step rows to at most a row budget, by exact per-block aggregates.

Rows are kept as they are while they fit the budget. Past it, steps are grouped into blocks of
``k`` consecutive step numbers (``k`` a power of two, doubled until the blocks fit) and each block
becomes one row:

* ``step``: the block's first step number (``step // k * k``), so steps keep their own units;
* ``loss`` and every other numeric column: the mean over the block's records (a NaN or inf in
  the block makes its mean NaN or inf, so it stays visible);
* ``loss_max``: the largest finite loss of the block, so a one-step spike stays visible;
* ``epoch`` and ``batch_fp``: the block's first record's (an integer epoch stays an integer; a
  static composition's fingerprints recur across epochs in any subsample, a shuffled one's never);
* ``line_no``: the block's first line; ``block_steps``: how many records the block holds.

Partial aggregates (sums, counts, maxima, firsts) merge exactly, so blocks that span chunks
and later doublings of ``k`` give the same rows as one pass over the whole log would.
Resumes and repeated steps inside a reduced log are averaged into their block, not resolved.
"""

from __future__ import annotations

import polars as pl

from logdoctor.ingest.limits import ColumnBudget
from logdoctor.model import (
    BATCH_FP,
    BLOCK_STEPS,
    CANONICAL_COLUMNS,
    EPOCH,
    LINE_NO,
    LOSS,
    LOSS_MAX,
    MICRO_FP,
    STEP,
)

BLOCK = "_block"
COUNT = BLOCK_STEPS
#: Raw-mode column kept for structure.build_run (a restart marker).
RESTART = "restart"
_FIRST = (EPOCH, BATCH_FP, MICRO_FP)
_SUM, _N = "@sum", "@n"
_MAX_EPOCHS = 100_000


def _numeric(columns: list[str]) -> list[str]:
    return [c for c in columns if c not in (STEP, LINE_NO, BLOCK, COUNT, LOSS_MAX, RESTART, *_FIRST)]


def _canonical(table: pl.DataFrame) -> pl.DataFrame:
    """Only the canonical columns (and the restart marker): what blocks aggregate."""
    return table.select([c for c in table.columns if c in CANONICAL_COLUMNS or c == RESTART])


class BlockReducer:
    """Collects step tables chunk by chunk within ``max_rows`` rows (see the module docstring)."""

    def __init__(self, max_rows: int) -> None:
        self.max_rows = max_rows
        self.k = 1
        self.rows = 0
        self.backward = 0
        self._raw: list[pl.DataFrame] = []
        self._partial: pl.DataFrame | None = None
        self._last_step: int | None = None
        self._last_epoch: float | None = None
        self._epoch_starts: list[int] = []
        self._integer_epochs = True
        self._extras = ColumnBudget(lambda c: c in CANONICAL_COLUMNS or c == RESTART)

    def add(self, table: pl.DataFrame) -> None:
        """Add one chunk's step rows (file order, canonical names); every column is kept while the
        rows fit the budget, only the canonical ones once they are reduced to blocks."""
        if table.height == 0:
            return
        # while raw: at most MAX_KEYS extra names over all chunks (each chunk's parser keeps that
        # many, and their union would otherwise grow with the number of chunks)
        table = (self._extras.cut(table) if self.k == 1 else _canonical(table)).sort(LINE_NO)
        steps = table[STEP]
        back = int((steps.diff() <= 0).sum())
        if self._last_step is not None and int(steps[0]) <= self._last_step:
            back += 1
        self.backward += back
        self._last_step = int(steps[-1])
        self._track_epochs(table)
        self.rows += table.height
        if self.k == 1:
            self._raw.append(table)
            if self.rows <= self.max_rows:
                return
            table = _canonical(pl.concat(self._raw, how="diagonal_relaxed"))
            self._raw = []
            self.k = 2
        part = self._aggregate(table.drop(RESTART, strict=False))
        frames = [part] if self._partial is None else [self._partial, part]
        self._partial = self._merge(pl.concat(frames, how="diagonal_relaxed"))
        while self._partial.height > self.max_rows:
            self.k *= 2
            self._partial = self._merge(self._partial)

    def _track_epochs(self, t: pl.DataFrame) -> None:
        """Remember the steps where an integer epoch changes (exact steps per epoch later)."""
        if EPOCH not in t.columns or len(self._epoch_starts) > _MAX_EPOCHS:
            return
        ep = t.select(STEP, pl.col(EPOCH).cast(pl.Float64, strict=False)).drop_nulls().drop_nans()
        if ep.height == 0:
            return
        prev = pl.Series([self._last_epoch], dtype=pl.Float64)
        changed = ep[EPOCH] != pl.concat([prev, ep[EPOCH][:-1]]).fill_null(ep[EPOCH][0])
        self._epoch_starts.extend(ep.filter(changed)[STEP].to_list())
        self._last_epoch = float(ep[EPOCH][-1])
        self._integer_epochs = self._integer_epochs and bool((ep[EPOCH] == ep[EPOCH].round()).all())

    @property
    def steps_per_epoch(self) -> int | None:
        """Median steps between changes of an integer epoch, counted on the raw records."""
        if not self._integer_epochs or len(self._epoch_starts) < 2:
            return None
        med = pl.Series(self._epoch_starts).diff().drop_nulls().median()
        return round(float(med)) if med else None  # type: ignore[arg-type]

    def _aggregate(self, t: pl.DataFrame) -> pl.DataFrame:
        """Partial aggregates of raw rows, one row per block."""
        nums = _numeric(t.columns)
        t = t.with_columns(pl.col(c).cast(pl.Float64, strict=False) for c in nums)
        finite = pl.col(LOSS).filter(pl.col(LOSS).is_finite())
        aggs = [pl.len().alias(COUNT), pl.col(LINE_NO).min(), finite.max().alias(LOSS_MAX)]
        for c in nums:
            aggs += [pl.col(c).sum().alias(c + _SUM), pl.col(c).count().alias(c + _N)]
        aggs += [pl.col(c).drop_nulls().first() for c in _FIRST if c in t.columns]
        return t.group_by((pl.col(STEP) // self.k * self.k).alias(BLOCK)).agg(aggs)

    def _merge(self, p: pl.DataFrame) -> pl.DataFrame:
        """Merge partial aggregates into blocks of the current ``k``."""
        sums = [c for c in p.columns if c.endswith((_SUM, _N))]
        aggs = [pl.col(COUNT).sum(), pl.col(LINE_NO).min(), pl.col(LOSS_MAX).max()]
        aggs += [pl.col(c).sum() for c in sums]
        aggs += [pl.col(c).drop_nulls().first() for c in _FIRST if c in p.columns]
        p = p.sort(LINE_NO)
        return p.group_by((pl.col(BLOCK) // self.k * self.k).alias(BLOCK)).agg(aggs)

    def finish(self) -> tuple[pl.DataFrame, tuple[str, ...]]:
        """The kept rows (in file order) and notes that say what was reduced, if anything."""
        if self._partial is None:
            if not self._raw:
                return pl.DataFrame(), ()
            return pl.concat(self._raw, how="diagonal_relaxed"), ()
        p = self._partial.sort(BLOCK)
        nums = [c.removesuffix(_SUM) for c in p.columns if c.endswith(_SUM)]
        means = [pl.when(pl.col(c + _N) > 0).then(pl.col(c + _SUM) / pl.col(c + _N)).alias(c) for c in nums]
        firsts = [c for c in _FIRST if c in p.columns]
        out = p.select(
            pl.col(BLOCK).alias(STEP),
            pl.col(LINE_NO),
            *means,
            *firsts,
            pl.col(LOSS_MAX),
            pl.col(COUNT).cast(pl.Float64),
        )
        notes: tuple[str, ...] = (
            f"reduced to 1 row per {self.k} steps: the log holds {self.rows:,} step records, more "
            f"than the {self.max_rows:,} rows that fit the memory budget; each row holds its block's "
            f"mean ({LOSS_MAX}: the largest finite loss; epoch, batch_fp: the first record's)",
        )
        if self.backward:
            notes += (
                f"{self.backward} backward step jump(s) in the reduced log: resumes and repeated "
                "steps were averaged into their blocks, not resolved",
            )
        return out, notes
