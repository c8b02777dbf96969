"""Rules 1-3 of the structure stage: exact duplicates, backward steps (resumes, interleaved writers,
appended runs) and the later write wins; applied to the records in file order (``line_no``).

0. **Stuck counters** (``stuck.py``): far more records in a row at one step than the log's other
   steps repeat are a counter that stopped advancing; each such run keeps its last record and is
   reported in ``stuck_counters`` (not as duplicates, not as steps that went backwards).
1. **Exact duplicates.** A record identical to the record just before it (same step and the same
   training values; timing and throughput columns may differ) is a repeated write (ms-swift writes
   every record twice). It is dropped and counted in ``duplicate_steps``; it is not a resume.
2. **Backward steps.** A record whose step is not above the previous record's step starts a new
   monotonic segment. The jump is a **resume** when the segment it starts is long (at least
   ``MIN_RESUME_RUN`` records, or it runs to the end of the log) and such long jumps are rare
   (at most ``max(MAX_RESUMES, 1% of records)``). Otherwise the log interleaves writers (ranks,
   files): every such jump is counted in ``nonmonotonic_steps``; none is called a resume.
   Short jumps (fewer than ``MIN_RESUME_RUN`` records follow) beside rarer long ones are counted as
   non-monotonic too; when short jumps outnumber long ones, the whole log counts as interleaved.
   A long jump whose segment covers no step written before it (a late block filling a gap, as
   when files are concatenated out of order) is non-monotonic too: a resume rewrites steps.
   A step that goes back to where the log began (or below) after the log progressed is a
   fresh run appended to the file: a restart however short that run is, unless the log is
   interleaved (then it is one more backward jump).
   A parser may also flag the first record after a restart marker ("Training started") with a
   ``restart`` column: that record starts a resume even when its step does not go back (a flag on
   the very first record is the initial start, not a resume).
   A record that writes the step of the record just before it again, after no restart marker, is
   that step written twice (``rewrites.py``): merged into one record before rule 2, neither a
   resume nor another writer's step, unless the log is interleaved (then only a repeat at a
   progress bar's last position is merged). Counted in ``overwritten_steps``.
3. **The later write wins.** A resume at step ``r`` discards every earlier record with step >= ``r``
   (the final trajectory retrained those steps); they are counted in ``overwritten_steps``. A
   fresh run appended to the file (rule 2) discards every earlier record. Steps
   repeated by interleaving keep their last write (counted in ``overwritten_steps`` too, and the
   resumes' share alone in ``resume_overwritten``). The table is then sorted by step.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.base import RESTART, ParseResult
from logdoctor.model import LINE_NO, LOSS, OPTIONAL_COLUMNS, STEP, THROUGHPUT
from logdoctor.structure.rewrites import merge_rewrites
from logdoctor.structure.stuck import collapse_mask, find_stuck

MIN_RESUME_RUN = 3
MAX_RESUMES = 10
#: Columns compared to call two adjacent records identical (throughput and timings may differ).
SIGNATURE = tuple(c for c in (STEP, LOSS, *OPTIONAL_COLUMNS) if c != THROUGHPUT)


def _drop_duplicates(t: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Drop records identical to the record just before them; return (table, count dropped)."""
    if t.height < 2:
        return t, 0
    sig = pl.struct([c for c in SIGNATURE if c in t.columns]).hash()
    dup = (sig == sig.shift(1)) & (pl.col(STEP) == pl.col(STEP).shift(1))
    mask = t.select(dup.fill_null(False)).to_series()
    return t.filter(~mask), int(mask.sum())


def _rewrites_earlier_steps(step: np.ndarray, seg: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each jump position, whether its segment's step range covers steps written before it.

    A restart from a checkpoint writes steps again; a block of steps that arrives late and fills a
    gap (out-of-order files) covers none, so it is not a resume.
    """
    out = np.zeros(at.size, dtype=bool)
    for k, i in enumerate(at):  # only the few long jumps
        seg_steps = step[seg == seg[i]]
        earlier = step[:i]
        out[k] = bool(((earlier >= seg_steps.min()) & (earlier <= seg_steps.max())).any())
    return out


def _fresh_starts(t: pl.DataFrame) -> np.ndarray:
    """Records where the step goes back to where the log began (or below) after progress, or
    below the step before while there, right after a step up: a fresh run appended to the same
    file, however short it is, even after an earlier run that never passed the log's first step
    (never an interleaved writer, whose steps repeat, nor a log written newest first)."""
    step = t[STEP].to_numpy()
    if step.size < 2:
        return np.zeros(step.size, dtype=bool)
    prev = np.concatenate(([step[0]], step[:-1]))
    rose = np.concatenate(([False], prev[1:] > prev[:-1]))  # the row before was a step up
    fresh = (step <= step[0]) & ((prev > step[0]) | ((step < prev) & rose))
    fresh[0] = False
    return fresh


def _classify_jumps(t: pl.DataFrame, restart: pl.Series) -> tuple[pl.Series, int, int]:
    """(is_resume per record, count of non-resume backward jumps, how many of those repeat the
    step just before rather than go below it)."""
    resume, n = _classify(t, restart)
    same = t.select((pl.col(STEP) == pl.col(STEP).shift(1)).fill_null(False)).to_series()
    return resume, n, int((same & ~resume).sum())


class _Jumps(NamedTuple):
    """The backward jumps of a table in file order (rule 2)."""

    back: pl.Series  # the record's step is not above the step before it
    fresh: np.ndarray  # appended runs (always restarts, never interleaving)
    seg: pl.Series  # monotonic segment id per record
    long_after: np.ndarray  # jumps followed by a long stretch (resume candidates)

    @property
    def interleaved(self) -> bool:
        """Short jumps outnumber long ones, or long ones are too many to be resumes."""
        n_back = int(self.back.sum()) - int(self.fresh.sum())
        n_long = int(self.long_after.sum())
        return n_back - n_long > n_long or n_long > max(MAX_RESUMES, self.back.len() // 100)


def _jumps(t: pl.DataFrame) -> _Jumps:
    back = t.select((pl.col(STEP) <= pl.col(STEP).shift(1)).fill_null(False)).to_series()
    fresh = _fresh_starts(t)
    seg = back.cast(pl.Int64).cum_sum()
    seg_len = seg.to_frame("s").select(pl.len().over("s")).to_series()
    last_seg = seg == seg.max()
    long_after = (back & ((seg_len >= MIN_RESUME_RUN) | last_seg)).to_numpy() & ~fresh
    return _Jumps(back, fresh, seg, long_after)


def _classify(t: pl.DataFrame, restart: pl.Series) -> tuple[pl.Series, int]:
    back, fresh, seg, long_after = jumps = _jumps(t)
    n_back = int(back.sum()) - int(fresh.sum())
    if jumps.interleaved:
        # interleaved writers: no jump is a resume, not even one back to the first step (a
        # writer flushing its first chunk after another's is no fresh run)
        # a jump flagged as a restart (a clock reset, a marker) is still a resume
        return restart, n_back + int(fresh.sum()) - int((back & restart).sum())
    at = np.flatnonzero(long_after)
    keep = _rewrites_earlier_steps(t[STEP].to_numpy(), seg.to_numpy(), at)
    resume = fresh.copy()
    resume[at[keep]] = True
    # a backward jump flagged as a restart is a resume however short its stretch: never counted
    # among the non-monotonic records (an epoch-counted log's one-epoch rerun)
    flagged = int((back & restart).to_numpy()[~resume].sum())
    return pl.Series(resume) | restart, n_back - int(keep.sum()) - flagged


def _apply_resumes(
    t: pl.DataFrame, is_resume: pl.Series
) -> tuple[pl.DataFrame, tuple[int, ...], int, tuple[tuple[int, ...], int]]:
    """Discard records that a later resume retrained; return (table, resume steps, overwritten,
    (line of each resume record, rows of earlier runs appended before the last fresh run))."""
    inf = np.iinfo(np.int64).max
    fresh = pl.Series(_fresh_starts(t)) & is_resume
    t = t.with_columns(is_resume.alias("_resume"))
    # a fresh run appended to the file discards every earlier record, whatever its step
    first = pl.when(fresh).then(np.iinfo(np.int64).min).otherwise(pl.col(STEP))
    rs = pl.when(pl.col("_resume")).then(first).otherwise(inf)
    later_min = rs.reverse().cum_min().reverse().shift(-1).fill_null(inf)
    keep = t.select(pl.col(STEP) < later_min).to_series()
    last_fresh = np.flatnonzero(fresh.to_numpy())
    t = t.with_columns(pl.lit(int(last_fresh[-1]) if last_fresh.size else 0).alias("_earlier"))
    resumed = t.filter(pl.col("_resume"))
    steps = tuple(int(s) for s in resumed[STEP])
    lines = tuple(int(x) for x in resumed[LINE_NO]) if LINE_NO in t.columns else ()
    earlier = int(t["_earlier"][0]) if t.height else 0
    return t.filter(keep).drop("_resume", "_earlier"), steps, int((~keep).sum()) - earlier, (lines, earlier)


def _fresh_lines(t: pl.DataFrame, is_resume: pl.Series) -> tuple[int, ...]:
    """Lines of the first row of each fresh run appended to the log (rule 2), file order."""
    if LINE_NO not in t.columns:
        return ()
    fresh = pl.Series(_fresh_starts(t)) & is_resume
    return tuple(int(x) for x in t[LINE_NO].filter(fresh))


def _in_order(t: pl.DataFrame) -> bool:
    """Whether records are in file order with strictly increasing steps and no restart flag past
    the first record: then rules 1-3 change nothing (no duplicate, no backward jump, no resume)."""
    if RESTART in t.columns:
        flags = t[RESTART].cast(pl.Float64).fill_null(0).fill_nan(0).to_numpy()
        if np.any(flags[1:] != 0):
            return False
    if t[STEP].null_count() or (LINE_NO in t.columns and t[LINE_NO].null_count()):
        return False
    step = t[STEP].to_numpy()
    if not np.all(step[1:] > step[:-1]):
        return False
    line = t[LINE_NO].to_numpy() if LINE_NO in t.columns else step
    return bool(np.all(line[1:] >= line[:-1]))


def resolve(result: ParseResult) -> tuple[pl.DataFrame, dict[str, object]]:
    """Apply rules 1-3: the final trajectory's records sorted by step, and the counts."""
    if _in_order(result.table):  # the common case: one writer, one pass, no resume
        counts: dict[str, object] = dict.fromkeys(
            (
                "duplicate_steps",
                "nonmonotonic_steps",
                "repeated_steps",
                "resumes",
                "overwritten_steps",
                "resume_overwritten",
            ),
            0,
        )
        counts["resume_steps"] = ()
        counts["resume_lines"] = ((), 0)
        counts["fresh_lines"] = ()
        counts["stuck_counters"] = result.stuck_counters or ()
        return result.table.drop(RESTART, strict=False), counts
    t = result.table.sort(LINE_NO, maintain_order=True)
    restart = pl.Series([False] * t.height)
    if RESTART in t.columns:
        restart = t[RESTART].cast(pl.Float64).fill_null(0).fill_nan(0) != 0
        # the marker before the first step is the initial start, not a resume
        restart = restart.scatter(0, False) if t.height else restart
        t = t.drop(RESTART)
    line = t[LINE_NO].to_numpy() if LINE_NO in t.columns else None
    streamed = result.stuck_counters is not None  # found on the records before they were reduced
    stuck = result.stuck_counters or () if streamed else find_stuck(t[STEP].to_numpy(), line)
    if stuck and not streamed:
        keep = pl.Series(collapse_mask(t[STEP].to_numpy()))
        t, restart = t.filter(keep), restart.filter(keep)
    t, dups = _drop_duplicates(t.with_columns(restart.alias(RESTART)))
    marks = (*result.markers.run_headers, *result.markers.resume_lines)
    t, restart, rewritten = merge_rewrites(t.drop(RESTART), t[RESTART], lambda: _jumps(t).interleaved, marks)
    is_resume, nonmono, repeated = _classify_jumps(t, restart)
    fresh_lines = _fresh_lines(t, is_resume)
    t, resume_steps, by_resumes, resume_lines = _apply_resumes(t, is_resume)
    deduped = t.unique(subset=[STEP], keep="last", maintain_order=True).sort(STEP)
    overwritten = by_resumes + t.height - deduped.height + rewritten
    counts = {
        "duplicate_steps": dups,
        "nonmonotonic_steps": nonmono,
        "repeated_steps": repeated,
        "resumes": len(resume_steps),
        "resume_steps": resume_steps,
        "overwritten_steps": overwritten,
        "resume_overwritten": by_resumes,
        "resume_lines": resume_lines,
        "fresh_lines": fresh_lines,
        "stuck_counters": stuck,
    }
    return deduped, counts
