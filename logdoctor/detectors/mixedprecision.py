"""Mixed-precision trouble: skipped (overflowed) iterations (LD020) and a collapsing loss scale (LD022)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import polars as pl

from logdoctor import codes
from logdoctor.detectors.base import NO_SCALER, Analyzer, Detection
from logdoctor.detectors.fp16overflows import MIN_NEVER_UPDATED, late_null, never_updated, never_updated_finding
from logdoctor.ingest.parsers.overflows import SKIP_SPAN, SKIPPED_STEPS
from logdoctor.model import STEP, Finding, Run, Severity
from logdoctor.options import Option, at_least, fraction, positive
from logdoctor.structure.counters import is_failure_counter

#: Column names of the dynamic loss scale (Megatron ``loss scale``, DeepSpeed ``loss_scale``, HF ``scaler``).
SCALE_COLUMNS = ("loss_scale", "scale", "cur_scale", "grad_scale", "scaler_scale")


def _column(rows: pl.DataFrame, name: str) -> np.ndarray:
    return rows[name].cast(float).fill_null(np.nan).to_numpy().astype(float)


def counter_rows(run: Run, columns: list[str]) -> pl.DataFrame:
    """``step`` and ``columns`` of every step record, with or without a loss, sorted by step:
    counters and scales are the log's on every row that prints them (Megatron's all-skipped
    iteration has a loss scale and a skip count but no loss)."""
    rows = run.table.select(STEP, *columns)
    extra = run.lossless
    if extra.height and STEP in extra.columns and any(c in extra.columns for c in columns):
        have = [c for c in columns if c in extra.columns]
        more = extra.select(pl.col(STEP).cast(rows.schema[STEP]), *(pl.col(c).cast(pl.Float64) for c in have))
        more = more.filter(~pl.col(STEP).is_in(rows[STEP].implode()))
        rows = pl.concat([rows.with_columns(pl.col(c).cast(pl.Float64) for c in columns), more], how="diagonal")
    return rows.sort(STEP)


class MixedPrecisionDetector(Analyzer):
    """Skipped iterations and the loss scale, read from the columns Megatron/DeepSpeed log."""

    name = "mixed_precision"
    options: ClassVar[tuple[Option, ...]] = (
        at_least("collapse_factor", 1.0),
        positive("min_scale"),
        fraction("tail_frac"),
    )

    def __init__(self, *, collapse_factor: float = 2.0**10, min_scale: float = 1.0, tail_frac: float = 0.25) -> None:
        #: a collapse: over the last ``tail_frac`` of the rows the scale stays below ``min_scale`` and
        #: ``collapse_factor`` under its peak (fairseq's scale wanders 0.5-64 in healthy runs; Megatron
        #: drops 2^32 -> 2^16 at the start of healthy runs: neither is a collapse)
        self.tail_frac = tail_frac
        self.collapse_factor = collapse_factor
        self.min_scale = min_scale

    def analyze(self, run: Run) -> Detection:
        """LD020 when any iteration was skipped; LD022 when the loss scale collapses."""
        scale_col = next((c for c in SCALE_COLUMNS if run.has(c)), None)
        out: list[Finding] = []
        skipped = next(
            (
                c
                for c in run.table.columns
                if "skipped" in c and c != SKIP_SPAN and is_failure_counter(c) and run.has(c)
            ),
            None,
        )
        span_col = SKIP_SPAN if skipped == SKIPPED_STEPS and run.has(SKIP_SPAN) else None
        rows = counter_rows(run, [c for c in (scale_col, skipped, span_col) if c is not None])
        steps = rows[STEP].to_numpy()
        scale = _column(rows, scale_col) if scale_col else None
        if skipped is not None:
            spans = _column(rows, span_col) if span_col else np.diff(steps.astype(float), prepend=np.nan)
            found = self._skipped(steps, _column(rows, skipped), skipped, scale, spans)
            out += [found] if found else []
        if scale is not None:
            found = self._collapse(steps, scale)
            out += [found] if found else []
        return Detection(tuple(out), skipped=NO_SCALER if skipped is None and scale is None else "")

    def _skipped(
        self, steps: np.ndarray, counts: np.ndarray, col: str, scale: np.ndarray | None, spans: np.ndarray
    ) -> Finding | None:
        hit = np.isfinite(counts) & (counts > 0)
        if not hit.any():
            return None
        if never_updated(counts, spans):
            return never_updated_finding(steps, counts, spans, col)
        if every_row_skipped(counts, spans):
            return _none_applied(steps, counts, col, scale)
        pairs = zip(steps[hit][:6], counts[hit][:6], strict=True)
        where = ", ".join(f"{int(c):,} at step {int(s):,}" for s, c in pairs)
        more = "" if hit.sum() <= 6 else f" and {int(hit.sum()) - 6} more rows"
        msg = f"{int(counts[hit].sum()):,} iterations were skipped for gradient overflow ({where}{more})"
        ev: dict[str, float | int | str] = {
            "column": col,
            "skipped_total": int(counts[hit].sum()),
            "rows_with_skips": int(hit.sum()),
            "first_step": int(steps[hit][0]),
            "last_step": int(steps[hit][-1]),
        }
        fin = scale[np.isfinite(scale)] if scale is not None else np.empty(0)
        severity = codes.RULES["LD020"].severity
        if fin.size and fin.max() > fin.min():
            msg += f"; the loss scale went from {fin[0]:,.0f} to {fin[-1]:,.0f} (lowest {fin.min():,.0f})"
            ev |= {"loss_scale_first": float(fin[0]), "loss_scale_last": float(fin[-1])}
            ev["loss_scale_min"] = float(fin.min())
        if scale is not None and fin.size:
            extra, calm, more_ev = _calibration_split(steps, counts, hit, _calibration_end(scale, steps.size))
            msg, ev = msg + extra, ev | more_ev
            severity = Severity.INFO if calm else severity
        elif scale is None:  # no scale logged: the warm-up is the first rows that each skipped a step
            zero = np.flatnonzero(np.isfinite(counts) & (counts == 0))
            extra, calm, more_ev = _calibration_split(steps, counts, hit, int(zero[0]) if zero.size else steps.size)
            msg, ev = msg + extra, ev | more_ev
            severity = Severity.INFO if calm else severity
        return codes.finding(
            "LD020",
            msg + ".",
            severity=severity,
            first_step=int(steps[hit][0]),
            last_step=int(steps[hit][-1]),
            evidence=ev,
        )

    def _collapse(self, steps: np.ndarray, scale: np.ndarray) -> Finding | None:
        ok = np.isfinite(scale) & (scale > 0)
        if ok.sum() < 2:
            return None
        s, st = scale[ok], steps[ok]
        peak = np.maximum.accumulate(s)
        factor = peak / s
        tail = s[-max(2, int(self.tail_frac * s.size)) :]
        if not (tail.max() < self.min_scale and peak[-1] / tail.max() >= self.collapse_factor):
            return None
        i = int(np.flatnonzero((s < self.min_scale) & (factor >= self.collapse_factor))[0])
        return codes.finding(
            "LD022",
            f"The loss scale collapsed to {s[i]:g} at step {int(st[i]):,} (from {peak[i]:,.0f}, "
            f"/{factor[i]:,.0f}): fp16 gradients keep overflowing.",
            first_step=int(st[i]),
            last_step=int(st[-1]),
            evidence={"loss_scale": float(s[i]), "peak_scale": float(peak[i]), "factor": float(factor[i])},
        )


def every_row_skipped(counts: np.ndarray, spans: np.ndarray) -> bool:
    """Every row counts a skip, and every row whose span is known skipped each step it covers: the
    log shows no update applied at all (too few steps for ``never_updated``'s error)."""
    ok = np.isfinite(spans) & (spans > 0)
    return bool(counts.size and np.all(np.isfinite(counts) & (counts > 0)) and np.all(counts[ok] >= spans[ok]))


def _none_applied(steps: np.ndarray, counts: np.ndarray, col: str, scale: np.ndarray | None) -> Finding:
    """LD020 at warning: every step line the log holds skipped its update, over fewer steps than a loss
    scale's calibration can skip (``MIN_NEVER_UPDATED``): no update was applied before the log ends,
    which says nothing yet about the gradients (the scale may still have been calibrating)."""
    total = int(counts.sum())
    fin = scale[np.isfinite(scale)] if scale is not None else np.empty(0)
    cut = f"; the loss scale went from {fin[0]:,.0f} to {fin[-1]:,.0f}" if fin.size > 1 and fin[0] != fin[-1] else ""
    return codes.finding(
        "LD020",
        f"No update was ever applied: every one of the {steps.size:,} step lines (steps {int(steps[0]):,}-"
        f"{int(steps[-1]):,}) skipped its update ({total:,} skipped, `{col}`){cut}. A loss scale calibrating "
        f"down skips this many at the start (an error from over {MIN_NEVER_UPDATED} steps all skipped); the "
        "log ends before the model was updated once.",
        severity=Severity.WARNING,
        first_step=int(steps[0]),
        last_step=int(steps[-1]),
        evidence={"column": col, "skipped_total": total, "rows_with_skips": int(steps.size), "none_applied": 1},
        confidence=0.8,
    )


def _calibration_end(scale: np.ndarray, n: int) -> int:
    """The first row after the loss scale's calibration: where it first grew back (``n``: never)."""
    s = np.where(np.isfinite(scale), scale, np.nan)
    grew = np.flatnonzero(np.diff(s) > 0) + 1  # NaN comparisons are False
    return int(grew[0]) if grew.size else n


def _calibration_split(
    steps: np.ndarray, counts: np.ndarray, hit: np.ndarray, end: int
) -> tuple[str, bool, dict[str, float | int | str]]:
    """Skips before row ``end`` (the loss scale's calibration, or the warm-up rows that each skipped)
    are normal; later ones are judged against the settled scaler's null (fp16overflows.late_null).
    Returns (message tail, True when nothing beyond the null, evidence)."""
    rows = np.flatnonzero(hit)
    calib, late = rows[rows < end], rows[rows >= end]
    k_cal, k_late = int(counts[calib].sum()), int(counts[late].sum())
    ev: dict[str, float | int | str] = {"skipped_in_calibration": k_cal, "skipped_after_calibration": k_late}
    if not late.size:
        return ", all while the loss scale calibrated down: normal for dynamic loss scaling", True, ev
    start = float(steps[calib[-1]]) if calib.size else float(steps[0])
    warn, lam, p = late_null(k_late, max(1.0, float(steps[-1]) - start), 1)
    ev |= {"expected_by_null": lam, "p_value": p}
    tail = (
        f"; {k_late:,} after the scale had settled, {'more' if warn else 'no more'} than a scaler probing "
        f"a higher scale gives (about {lam:.1f})"
    )
    return tail, not warn, ev
