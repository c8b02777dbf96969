"""fp16 overflow lines: the scale calibrating (LD023), overflows once it settled (LD024), all steps skipped (LD020)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors.base import NO_SCALER, Analyzer, Detection
from logdoctor.ingest.parsers.overflows import CUT, REGROWN, SCALERS, SKIPS, TRIED
from logdoctor.model import STEP, Finding, Run, Severity
from logdoctor.options import Option, fraction, int_opt, positive
from logdoctor.stats.distributions import poisson_sf

#: The null's growth window (steps): the shortest of common defaults, so the null is lenient.
NULL_WINDOW = 100.0
#: A warning needs at least this many late overflows and a Poisson tail below ALPHA.
MIN_LATE, ALPHA = 3, 0.001


def late_null(
    k: int, settled: float, scalers: int, window: float = NULL_WINDOW, alpha: float = ALPHA, min_late: int = MIN_LATE
) -> tuple[bool, float, float]:
    """(beyond the null, expected count, Poisson tail) for ``k`` overflows over ``settled`` steps.

    A settled dynamic scaler grows its scale after ``window`` clean steps and may overflow right
    after: about one overflow per window per scaler, so the null count is Poisson(scalers * settled / window).
    """
    lam = scalers * settled / window
    p = poisson_sf(k, lam)
    return (k >= min_late and p < alpha), lam, p


#: Every step skipped over more steps than this is no calibration: a dynamic scaler calibrating down
#: from the largest common initial scale (Megatron's 2^32) skips at most 32 steps in a row, and twice
#: that is left for hysteresis; beyond, the model never updated.
MIN_NEVER_UPDATED = 64


def never_updated(counts: np.ndarray, spans: np.ndarray) -> bool:
    """True when every optimizer step the counted rows cover was skipped (``counts[i]`` skipped of
    ``spans[i]`` steps, NaN where unknown) and they cover more than ``MIN_NEVER_UPDATED`` steps."""
    ok = np.isfinite(counts) & np.isfinite(spans) & (spans > 0)
    return bool(spans[ok].sum() > MIN_NEVER_UPDATED and np.all(counts[ok] >= spans[ok]))


def calibration_end(steps: np.ndarray, hit: np.ndarray, window: float = NULL_WINDOW) -> int:
    """The first overflow row that is no calibration, ``steps.size`` when all are.

    Calibration halves the scale from its initial value, one overflow after another; a dynamic
    scaler grows its scale after ``window`` clean steps. So an overflow that comes after at least
    ``window`` clean steps (from the run's first row, or the previous overflow's row, to the
    start of its own row's interval) hit a scale that had grown back: the scaler probing, not
    calibration. ``window`` is the shortest growth window of common defaults (``NULL_WINDOW``).
    """
    clean_from = float(steps[0]) if steps.size else 0.0
    for h in hit:
        start = float(steps[h - 1]) if h > 0 else float(steps[0])
        if start - clean_from >= window:
            return int(h)
        clean_from = float(steps[h])
    return int(steps.size)


def never_updated_finding(steps: np.ndarray, counts: np.ndarray, spans: np.ndarray, col: str) -> Finding:
    """LD020 at error: every optimizer step the counters (``col``) cover was skipped."""
    ok = np.isfinite(counts) & np.isfinite(spans) & (spans > 0)
    first, last = int(steps[ok][0]), int(steps[ok][-1])
    total, covered = int(counts[ok].sum()), int(spans[ok].sum())
    return codes.finding(
        "LD020",
        f"Every optimizer step was skipped ({total:,} of {covered:,} counted through step {last:,}, "
        f"`{col}`): the model never updated; the gradients overflow or are NaN at every step.",
        severity=Severity.ERROR,
        first_step=first,
        last_step=last,
        evidence={"column": col, "skipped_total": total, "steps_counted": covered, "never_updated": 1},
        confidence=0.9,
    )


def _col(run: Run, name: str) -> np.ndarray:
    return run.table[name].cast(float).fill_null(np.nan).to_numpy().astype(float)


class Fp16OverflowDetector(Analyzer):
    """Overflow lines read by ingest (DeepSpeed ``OVERFLOW! ... Skipping step``, fairseq, apex).

    Calibration: dynamic loss scaling starts high (DeepSpeed 2^16, fairseq 128) and halves at each
    overflow until gradients fit; those first skipped steps are how it works (LD023, info). The
    scale has settled once an overflow hits a scale that had grown back (the scaler doubles it
    after ``window`` clean steps). After that, a healthy scaler still overflows about once per
    growth window per scaler: the null is Poisson with mean ``scalers * settled_steps / window``,
    ``window`` = 100 steps, the shortest window of common defaults (DeepSpeed-Chat 100,
    DeepSpeed/Megatron 1000, fairseq 2^14/(GPUs*update_freq), torch GradScaler 2000), so the null is lenient.
    LD024 is a warning when at least ``min_late`` overflows came after calibration and their
    count is beyond that null (Poisson tail < ``alpha``), else info.
    """

    name = "fp16_overflows"
    options: ClassVar[tuple[Option, ...]] = (
        positive("window"),
        fraction("alpha", high_open=True),
        int_opt("min_late", 1),
    )

    def __init__(self, *, window: float = NULL_WINDOW, alpha: float = ALPHA, min_late: int = MIN_LATE) -> None:
        self.window = window
        self.alpha = alpha
        self.min_late = min_late

    def analyze(self, run: Run) -> Detection:
        """LD023 for the calibration overflows, LD024 for those after it, LD020 at error when every
        step overflowed (no calibration lasts that long: ``MIN_NEVER_UPDATED``); nothing without overflow lines."""
        if not run.has(SKIPS):
            return Detection(skipped=NO_SCALER)
        steps = run.table[STEP].to_numpy().astype(float)
        skips = _col(run, SKIPS)
        hit = np.flatnonzero(skips > 0)
        if hit.size == 0:
            return Detection()
        per_scaler = skips / max(1.0, float(np.nanmax(_col(run, SCALERS))))
        spans = np.diff(steps, prepend=np.nan)
        if never_updated(per_scaler, spans):
            return Detection((never_updated_finding(steps, per_scaler, spans, "fp16 overflow lines"),))
        grown = np.flatnonzero(np.nan_to_num(_col(run, REGROWN)) > 0)
        end = min(int(grown[0]) if grown.size else steps.size, calibration_end(steps, hit, self.window))
        calib, late = hit[hit < end], hit[hit >= end]
        out = [_calibration(run, steps, skips, calib)] if calib.size else []
        if late.size:
            out.append(self._late(run, steps, skips, calib, late))
        return Detection(tuple(out))

    def _late(self, run: Run, steps: np.ndarray, skips: np.ndarray, calib: np.ndarray, late: np.ndarray) -> Finding:
        tried, cut = _col(run, TRIED), _col(run, CUT)
        scalers = int(np.nanmax(_col(run, SCALERS)))
        start = float(steps[calib[-1]]) if calib.size else float(steps[0])
        settled = max(1.0, float(steps[-1]) - start)
        k = int(skips[late].sum())
        warn, lam, p = late_null(k, settled, scalers, self.window, self.alpha, self.min_late)
        first, last = int(steps[late[0]]), int(steps[late[-1]])
        # plain words; the null's Poisson tail p is evidence (-v, JSON)
        probing = f"a scaler probing a higher scale once per {self.window:g} steps gives about {lam:.1f}"
        verdict = (
            f"more than {probing}: gradients overflow often at the settled scale"
            if warn
            else f"no more than {probing}: the scaler probing, not a problem by itself"
        )
        msg = (
            f"{k} optimizer step(s) skipped for fp16 overflow after the loss scale had settled "
            f"({_span(first, last)}, at scale {np.nanmax(tried[late]):g}, cut to {np.nanmin(cut[late]):g}); "
            f"{verdict}."
        )
        return codes.finding(
            "LD024",
            msg,
            severity=Severity.WARNING if warn else Severity.INFO,
            first_step=first,
            last_step=last,
            evidence={
                "skipped_after_calibration": k,
                "rows_with_skips": int(late.size),
                "settled_steps": settled,
                "scalers": scalers,
                "null_window": self.window,
                "expected_by_null": lam,
                "p_value": p,
                "skip_rate": k / (scalers * settled),
                "scale_tried_max": float(np.nanmax(tried[late])),
                "scale_cut_min": float(np.nanmin(cut[late])),
            },
            confidence=0.7 if warn else 0.5,
        )


def _calibration(run: Run, steps: np.ndarray, skips: np.ndarray, calib: np.ndarray) -> Finding:
    tried, cut = _col(run, TRIED), _col(run, CUT)
    first, last = int(steps[calib[0]]), int(steps[calib[-1]])
    k = int(skips[calib].sum())
    hi, lo = float(np.nanmax(tried[calib])), float(np.nanmin(cut[calib]))
    msg = (
        f"{k} optimizer step(s) skipped for fp16 overflow while the loss scale calibrated down from "
        f"{hi:g} to {lo:g} ({_span(first, last)}): normal for dynamic loss scaling, nothing to fix."
    )
    return codes.finding(
        "LD023",
        msg,
        first_step=first,
        last_step=last,
        evidence={
            "skipped_in_calibration": k,
            "rows_with_skips": int(calib.size),
            "initial_scale": hi,
            "calibrated_scale": lo,
            "scalers": int(np.nanmax(_col(run, SCALERS))),
        },
        confidence=0.9,
    )


def _span(first: int, last: int) -> str:
    return f"step {first:,}" if first == last else f"steps {first:,}-{last:,}"
