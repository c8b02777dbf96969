"""The learning-rate schedule (LD601-LD605): no warm-up, jumps, rises after the peak, an lr too high."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors import lrevents, robust
from logdoctor.detectors.base import NO_LR, TOO_FEW_ROWS, Analyzer, Detection
from logdoctor.detectors.lrevents import LrChange
from logdoctor.detectors.robust import FloatArray, Series
from logdoctor.model import LOSS, Finding, Run
from logdoctor.options import Option, at_least, fraction

#: Fewer lr rows than this: no schedule analysis.
MIN_ROWS = 10
#: Rise episodes are sought on at most this many evenly strided rows (the scan is a Python loop).
MAX_SCAN_ROWS = 20_000


def first_peak(v: FloatArray) -> int:
    """Row where the warm-up ends: the last row before the lr first decreases (the last row if never)."""
    down = np.flatnonzero(np.diff(v) < -1e-12 * np.maximum(np.abs(v[:-1]), 1e-300))
    return int(down[0]) if down.size else v.size - 1


def rise_episodes(v: FloatArray, start: int, factor: float) -> list[tuple[int, int]]:
    """(trough row, row where the rise reached ``factor`` x the trough) for each rise after ``start``."""
    lv = np.log(np.maximum(v, 1e-300))
    step = float(np.log(factor))
    out: list[tuple[int, int]] = []
    rising, lo, lo_i, hi = False, lv[start], start, lv[start]
    for i in range(start + 1, v.size):
        x = float(lv[i])
        if not rising and x < lo:
            lo, lo_i = x, i
        elif not rising and x >= lo + step:
            out.append((lo_i, i))
            rising, hi = True, x
        elif rising and x > hi:
            hi = x
        elif rising and x <= hi - step:
            rising, lo, lo_i = False, x, i
    return out


def restart_jumps(s: Series, jumps: list[LrChange], tolerance: float = 0.25) -> list[LrChange]:
    """The jumps back to about the earlier peak (SGDR-style warm restarts)."""
    out = []
    for c in jumps:
        top = float(s.values[: c.row].max())
        if c.before < top and abs(c.after / top - 1.0) <= tolerance:
            out.append(c)
    return out


def cycles(
    s: Series, min_ratio: float = lrevents.MIN_RATIO, restart_tolerance: float = 0.25, min_rise_frac: float = 0.01
) -> tuple[list[tuple[int, int]], list[LrChange], list[LrChange]]:
    """The lr's smooth rise episodes after its warm-up peak, its restart jumps and its other jumps up."""
    if s.n < MIN_ROWS or float(s.values.max()) <= 0:
        return [], [], []
    peak = first_peak(s.values)
    jumps = [c for c in lrevents.discontinuities(s, min_ratio=min_ratio) if c.is_rise and c.row > peak]
    restarts = restart_jumps(s, jumps, restart_tolerance)
    rows = {c.row for c in jumps}
    k = max(1, s.n // MAX_SCAN_ROWS)  # a smooth rise of 1.5x spans many rows: every k-th row finds it
    eps = [(a * k, b * k) for a, b in rise_episodes(s.values[::k], peak // k, min_ratio)]
    # a rise that never gets back to a material share of the peak (the tail of a cosine run a few
    # steps past its planned total: 0 -> 5e-8 against a 3e-3 peak) changes no update
    floor = min_rise_frac * float(s.values[peak])
    smooth = [(a, b) for a, b in eps if not any(a - k < r <= b + k for r in rows) and s.values[a:].max() >= floor]
    return smooth, restarts, [c for c in jumps if c not in restarts]


def is_cyclic(s: Series) -> bool:
    """The one definition of a cyclic / restarting lr (LD604): two or more rises after the warm-up
    peak, or a warm restart; a single rise is LD602, "outside a recognisable cyclic schedule"."""
    smooth, restarts, _ = cycles(s)
    return len(smooth) + len(restarts) >= 2 or bool(restarts)


class LrScheduleDetector(Analyzer):
    """Reads the logged lr: warm-up, discontinuities, restarts, rises, and the loss's answer to them."""

    name = "lr-schedule"
    options: ClassVar[tuple[Option, ...]] = (
        at_least("min_ratio", 1.0),
        fraction("warmup_peak_frac"),
        fraction("restart_tolerance"),
        fraction("min_fall", high_open=True),
        fraction("stall_frac"),
        at_least("far_above", 1.0),
        fraction("min_rise_frac"),
    )

    def __init__(
        self,
        *,
        min_ratio: float = lrevents.MIN_RATIO,
        warmup_peak_frac: float = 0.95,
        restart_tolerance: float = 0.25,
        min_fall: float = 0.3,
        stall_frac: float = 0.9,
        far_above: float = 1.5,
        min_rise_frac: float = 0.01,
    ) -> None:
        self.min_ratio = min_ratio
        self.min_rise_frac = min_rise_frac
        self.warmup_peak_frac = warmup_peak_frac
        self.restart_tolerance = restart_tolerance
        self.min_fall = min_fall
        self.stall_frac = stall_frac
        self.far_above = far_above

    def analyze(self, run: Run) -> Detection:
        """LD601 no warm-up, LD603 jumps, LD604 restarts/cycles, LD602 rises after the peak, LD605 lr too high."""
        s = lrevents.lr_series(run)
        if s.n < MIN_ROWS or float(s.values.max()) <= 0:
            return Detection(skipped=NO_LR if s.n == 0 or float(s.values.max()) <= 0 else TOO_FEW_ROWS)
        loss = robust.series(run, LOSS)
        found = lrevents.discontinuities(s, min_ratio=self.min_ratio)
        episodes, restarts, jumps = cycles(s, self.min_ratio, self.restart_tolerance, self.min_rise_frac)
        findings = self._warmup(s)
        findings += [self._jump(run, loss, c) for c in jumps]
        findings += self._rises(s, episodes, restarts)
        drops = [c for c in found if not c.is_rise]
        # only the first drop: a loss stuck from the start until then means the lr was too high; a
        # flat stretch between two later drops is ordinary annealing (ReduceLROnPlateau, step decay)
        findings += self._too_high(loss, s, drops[0], found) if drops else []
        return Detection(tuple(findings))

    def _warmup(self, s: Series) -> list[Finding]:
        v = s.values
        top = float(v.max())
        if v[0] < self.warmup_peak_frac * top or s.steps[0] > max(10, 0.01 * s.steps[-1]):
            return []  # below the peak, or first logged too late to know how the run started
        ev = {
            "first_step": int(s.steps[0]),
            "first_lr": float(v[0]),
            "peak_lr": top,
            "rows": s.n,
            "peak_frac": self.warmup_peak_frac,
        }
        return [
            codes.finding(
                "LD601",
                f"The lr is at its peak ({top:.3g}) from the first logged step ({s.steps[0]}): no warm-up.",
                first_step=int(s.steps[0]),
                last_step=int(s.steps[0]),
                line=int(s.lines[0]) or None,
                confidence=0.8,
                evidence=ev,
            )
        ]

    def _jump(self, run: Run, loss: Series, c: LrChange) -> Finding:
        # lrloss is imported where an lr change is judged, not by every log's process (issue 33)
        from logdoctor.detectors.lrloss import loss_response

        resp = loss_response(run, loss, c)
        ev: dict[str, float | int | str | bool | None] = {
            "step": c.step,
            "prev_step": c.prev_step,
            "lr_before": c.before,
            "lr_after": c.after,
            "lr_ratio": round(c.ratio, 4),
            **resp.evidence(),
        }
        return codes.finding(
            "LD603",
            f"{c.describe().capitalize()}, a discontinuity that is not one leg of a ramp{resp.clause()}.",
            first_step=c.step,
            last_step=resp.last_step or c.step,
            confidence=0.9,
            evidence=ev,
        )

    def _rises(self, s: Series, episodes: list[tuple[int, int]], restarts: list[LrChange]) -> list[Finding]:
        n_cycles = len(episodes) + len(restarts)
        if n_cycles >= 2 or restarts:
            steps = sorted([int(s.steps[b]) for _, b in episodes] + [c.step for c in restarts])
            ev = {
                "cycles": n_cycles,
                "restarts": len(restarts),
                "smooth_rises": len(episodes),
                "first_step": steps[0],
                "last_step": steps[-1],
            }
            return [
                codes.finding(
                    "LD604",
                    f"A cyclic/restart lr schedule: the lr rises again {n_cycles} time(s) after its peak "
                    f"(first at step {steps[0]}).",
                    first_step=steps[0],
                    last_step=steps[-1],
                    confidence=0.8,
                    evidence=ev,
                )
            ]
        if not episodes:
            return []
        a, b = episodes[0]
        ratio = float(s.values[b] / s.values[a])
        rise: dict[str, float | int | str | bool | None] = {
            "trough_step": int(s.steps[a]),
            "trough_lr": float(s.values[a]),
            "step": int(s.steps[b]),
            "lr": float(s.values[b]),
            "ratio": round(ratio, 4),
            "min_ratio": self.min_ratio,
        }
        return [
            codes.finding(
                "LD602",
                f"The lr rises again after its peak: from {s.values[a]:.3g} at step {s.steps[a]} to "
                f"{s.values[b]:.3g} at step {s.steps[b]} ({ratio:.2f}x), outside a recognisable cyclic schedule.",
                first_step=int(s.steps[a]),
                last_step=int(s.steps[b]),
                line=int(s.lines[b]) or None,
                confidence=0.7,
                evidence=rise,
            )
        ]

    def _too_high(self, loss: Series, s: Series, c: LrChange, found: list[LrChange]) -> list[Finding]:
        from logdoctor.detectors.lrloss import level_fall

        prev = [d.step for d in found if d.step < c.step]
        fall = level_fall(loss, c, prev[-1] if prev else None)
        if fall is None:
            return []
        if not (fall.fall >= self.min_fall and fall.stalled >= self.stall_frac and fall.far >= self.far_above):
            return []
        pct = round(100 * fall.fall)
        return [
            codes.finding(
                "LD605",
                f"The loss fell {pct}% when {c.describe()}: the earlier lr was too high (over its "
                f"{fall.phase_rows} rows at that lr the loss made no progress: median {fall.before:.4g} over its last "
                f"{fall.before_rows} rows (steps {fall.before_steps[0]}-{fall.before_steps[1]}), "
                f"{fall.far:.1f}x above the "
                f"{fall.later_min:.4g} the run reaches later, its lowest 5-row median).",
                first_step=fall.phase_first_step,
                last_step=c.step,
                confidence=0.8,
                evidence={"step": c.step, "lr_before": c.before, "lr_after": c.after, **fall.evidence()},
            )
        ]
