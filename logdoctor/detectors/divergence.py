"""Divergence (LD002): a smoothed loss that climbs far above its best level so far and stays there."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors import robust
from logdoctor.detectors.base import TOO_FEW_ROWS, Analyzer, Detection
from logdoctor.detectors.changepoints import MIN_POINTS as REGIME_ROWS
from logdoctor.detectors.shortjump import MIN_RISE, short_jump
from logdoctor.detectors.spikes import times
from logdoctor.model import LOSS, Finding, Run, Severity
from logdoctor.options import Option, at_least, int_opt, positive

#: A log that ends inside a rise too short for a sustained stretch (``min_rows``): reported, as a warning
#: (whether it held is unknown), once at least ``END_ROWS`` rows at the end are above the best level and
#: the last smoothed level is ``END_RATIO`` times that best. Null (bench/end_rise_null.py): 124 healthy
#: real runs of 82 logs read whole and cut at every 5% of their rows (2,267 ends); 5 end with rows above, all
#: icefall's warm-up steps of its loss weights (LD301 names them), the highest 2.36x over 2 rows.
END_ROWS = 2
END_RATIO = 3.0
#: Below this many rows the smoothing window (3 rows, mirrored at the ends) hides a blow-up in the
#: last rows: the short-run jump (shortjump.py) is read as well (the spike detector's minimum).
SHORT_ROWS = 8


def short_divergence(s: robust.Series) -> list[Finding]:
    """LD002 in a run of fewer than ``SHORT_ROWS`` rows: the loss rose ``MIN_RISE`` times its first value
    above its lowest point and was still that high at the last row."""
    j = short_jump(s)
    if j is None or not j.held:
        return []
    v, p, lo = s.values, j.row, j.low_row
    end = "at the last row of the log" if p == s.n - 1 else f"and was still {v[-1]:.4g} at the last step {s.steps[-1]}"
    return [
        codes.finding(
            "LD002",
            f"The loss diverged at step {s.steps[p]}: from {v[lo]:.4g} (step {s.steps[lo]}) it rose to {v[p]:.4g} "
            f"({times(float(v[p] / v[lo]))}; a rise of {times(j.rise)[:-1]} times the first loss, {v[0]:.4g}) {end}. "
            f"Judged on all {s.n} rows of a run too short for smoothing.",
            confidence=0.8,
            first_step=int(s.steps[p]),
            last_step=int(s.steps[-1]),
            line=int(s.lines[p]) or None,
            evidence={
                "step": int(s.steps[p]),
                "best_level": float(v[lo]),
                "best_step": int(s.steps[lo]),
                "peak_level": float(v[p]),
                "peak_ratio": round(float(v[p] / v[lo]), 3),
                "final_level": float(v[-1]),
                "rise_over_first": round(j.rise, 4),
                "min_rise": MIN_RISE,
                "until_end": True,
                "rows": s.n,
            },
        )
    ]


class DivergenceDetector(Analyzer):
    """A smoothed loss that rises ``factor`` times above its best earlier level and stays there."""

    name = "divergence"
    #: every keyword of ``__init__`` with its type and bounds (checked where configured)
    options: ClassVar[tuple[Option, ...]] = (
        Option("factor", float, 1.0, None, low_open=True),
        at_least("min_rise_frac", 0),
        int_opt("min_rows", 1),
        Option("min_frac", float, 0, 1),
        int_opt("max_rows", 1),
        positive("noise_k"),
    )

    def __init__(
        self,
        *,
        factor: float = 1.5,
        min_rise_frac: float = 0.1,
        min_rows: int = 3,
        min_frac: float = 0.02,
        max_rows: int = 200,
        noise_k: float = 4.0,
    ) -> None:
        self.noise_k = noise_k
        self.factor = factor
        self.min_rise_frac = min_rise_frac
        self.min_rows = min_rows
        self.min_frac = min_frac
        self.max_rows = max_rows

    def analyze(self, run: Run) -> Detection:
        """LD002 at the first sustained stretch above ``factor`` x the best level so far."""
        s = robust.series(run, LOSS)
        found = self.find(s)
        if not found and s.n < SHORT_ROWS:
            found = short_divergence(s)
        if not found and s.n >= 4:
            found = self._end_rise(s)
        return Detection(tuple(found), skipped=TOO_FEW_ROWS if s.n < 4 and not found else "")

    def find(self, s: robust.Series) -> list[Finding]:
        """LD002 in one series (the loss, or a loss with an effect removed: diagnosis/lengthrise.py)."""
        return self._find(s) if s.n >= 4 else []

    def _end_rise(self, s: robust.Series) -> list[Finding]:
        """LD002 (a warning) when the log ends ``END_ROWS`` or more rows into a rise to ``END_RATIO`` times
        the best level before it, too few rows for the sustained stretch ``_find`` needs."""
        w, sm, best, _wander, up = self.rows_up(s)
        k = s.n if up.all() else int(np.argmin(up[::-1]))
        if k < END_ROWS or k == s.n:
            return []
        a = s.n - k
        ratio = float(sm[-1] / best[a - 1])
        if ratio < END_RATIO:
            return []
        return [
            codes.finding(
                "LD002",
                f"The loss rose at the end of the log: from a best of {best[a - 1]:.4g} to {sm[-1]:.4g} at the last "
                f"step {s.steps[-1]} ({ratio:.1f}x, smoothed over {w} rows), over its last {k} rows; the log ends "
                "too soon after it to tell a divergence from a passing spike.",
                severity=Severity.WARNING,
                confidence=0.6,
                first_step=int(s.steps[a]),
                last_step=int(s.steps[-1]),
                line=int(s.lines[a]) or None,
                evidence={
                    "step": int(s.steps[a]),
                    "best_level": float(best[a - 1]),
                    "final_level": float(sm[-1]),
                    "final_ratio": round(ratio, 3),
                    "rows_above": k,
                    "until_end": True,
                    "smoothing_rows": w,
                    "end_ratio": END_RATIO,
                },
            )
        ]

    def _rises_again(self, s: robust.Series, sm: np.ndarray, b: int, wander: float) -> int | None:
        """The trough row after the diverged stretch when the loss then rises again to the end.

        A second rise: the smoothed loss at the end is ``min_rise_frac`` (and the noise band
        ``wander``) above the lowest point after the stretch, and its last quarter still climbs.
        """
        if b >= s.n - 4:
            return None
        trough = b + int(np.argmin(sm[b:]))
        tail = sm[trough:]
        if tail.size < 4:
            return None
        rise = float(sm[-1] - sm[trough])
        if rise < max(self.min_rise_frac * abs(float(sm[trough])), wander):
            return None
        q = tail[-max(3, tail.size // 4) :]
        return trough if float(q[-1] - q[0]) > 0 else None

    @staticmethod
    def _wander(sm: np.ndarray, w: int, sigma: float, n: int) -> float:
        """How far the smoothed loss wanders by noise alone. From ``REGIME_ROWS`` rows on, the spread of
        window medians ``w`` rows apart (slow, correlated wandering included). In a shorter run a rise
        fills most of those differences and would be read as its own noise (ten rows rising five-fold
        would rise "within noise"), so the band comes from the rows' step-to-step noise ``sigma`` (the
        MAD of first differences, which one level shift barely moves): a median of ``w`` rows varies
        by ``1.25 sigma / sqrt(w)`` (the median's efficiency), and a rise is the difference of two such
        medians (the level and the best so far), ``sqrt(2)`` times that."""
        if n < REGIME_ROWS:
            return float(np.sqrt(2.0) * 1.25 * sigma / np.sqrt(w))
        return robust.smooth_noise(sm, w, sigma)

    def rows_up(self, s: robust.Series) -> tuple[int, np.ndarray, np.ndarray, float, np.ndarray]:
        """(smoothing rows, smoothed loss, its best so far, noise band, rows above ``factor`` x the best
        by more than the noise band)."""
        w = max(3, min(51, s.n // 20)) | 1
        sm = robust.rolling_median(s.values, w, mode="mirror")
        best = np.minimum.accumulate(sm)
        head = float(np.median(s.values[: max(3, s.n // 20)]))
        scale = max(abs(head), float(np.max(np.abs(sm))) * 0.1)
        wander = self.noise_k * self._wander(sm, w, robust.noise_sigma(s.values), s.n)
        up = (sm > self.factor * best) & (sm - best >= max(self.min_rise_frac * scale, wander)) & (best > 0)
        return w, sm, best, wander, up

    def _find(self, s: robust.Series) -> list[Finding]:
        w, sm, best, wander, up = self.rows_up(s)
        min_len = max(self.min_rows, min(self.max_rows, int(self.min_frac * s.n)))
        starts, ends = robust.runs_of(robust.sustained(up, min_len))
        if starts.size == 0:
            return []
        a, b = int(starts[0]), int(ends[0] - 1)
        ref_row = int(np.flatnonzero(sm[: a + 1] == best[a])[0])
        peak = a + int(np.argmax(sm[a : b + 1]))
        ratio = float(sm[peak] / best[a])
        ev = {
            "step": int(s.steps[a]),
            "best_level": float(best[a]),
            "best_step": int(s.steps[ref_row]),
            "peak_level": float(sm[peak]),
            "peak_step": int(s.steps[peak]),
            "peak_ratio": round(ratio, 3),
            "final_level": float(sm[-1]),
            "final_ratio": round(float(sm[-1] / best[a]), 3),
            "rows_above": b - a + 1,
            "until_end": bool(ends[0] == s.n),
            "smoothing_rows": w,
            "factor": self.factor,
        }
        stays = "until the end of the run" if ev["until_end"] else f"until step {s.steps[b]}"
        again = self._rises_again(s, sm, b, wander)
        # each later blow-up is named (a message that skips one misreads the run); one that the
        # closing "rising again since" covers is not repeated
        later = [(int(x), int(y) - 1) for x, y in zip(starts[1:], ends[1:], strict=True)]
        later = [(x, y) for x, y in later if again is None or x < again]
        if later:
            ev["later_stretches"] = len(later)
            spans = [f"{s.steps[x]}-{s.steps[y]} (to {float(np.max(sm[x : y + 1])):.4g})" for x, y in later[:3]]
            more = f" and {len(later) - 3} more stretches" if len(later) > 3 else ""
            stays += f"; it rose above {self.factor}x again over steps {' and '.join(spans)}{more}"
        if again is not None:  # no recovery: the loss climbs again to the end of the log
            trough = again
            ev |= {"rises_again": True, "trough_level": float(sm[trough]), "trough_step": int(s.steps[trough])}
            final = [int(x) for x in starts[1:] if x >= again]
            above = f", above {self.factor}x from step {s.steps[final[0]]}" if final else ""
            stays += (
                f"; it fell to {sm[trough]:.4g} by step {s.steps[trough]} and has been rising again since{above}, "
                f"to {sm[-1]:.4g} at the last step {s.steps[-1]} (still rising at the end of the log)"
            )
        # the finding covers the rows where the loss is diverged (every sustained stretch above
        # factor x best), not the recoveries between them
        stretches = tuple((int(s.steps[x]), int(s.steps[y - 1])) for x, y in zip(starts, ends, strict=True))
        ev["diverged_rows"] = int(sum(int(y) - int(x) for x, y in zip(starts, ends, strict=True)))
        return [
            codes.finding(
                "LD002",
                f"The loss diverged at step {s.steps[a]}: from a best of {best[a]:.4g} "
                f"(step {s.steps[ref_row]}) it rose to {sm[peak]:.4g} ({ratio:.1f}x, smoothed "
                f"over {w} rows) and stayed above {self.factor}x {stays}.",
                confidence=float(min(0.99, 0.5 + 0.5 * (1 - self.factor / ratio))),
                first_step=stretches[0][0],
                last_step=stretches[-1][1],
                line=int(s.lines[a]) or None,
                evidence=ev,
                spans=stretches if len(stretches) > 1 else (),
            )
        ]
