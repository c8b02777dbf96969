"""Step-time slowdowns (LD701): stretches of steps slower than the run's own baseline.

The baseline is the median time per step; a row is slow when it is ``min_factor`` x the baseline
and ``z_threshold`` robust sigmas above it (MAD of log time per step). Isolated slow steps (an
evaluation, a checkpoint save, the first compiled step) are removed by a rolling median over
``smooth_rows`` rows before stretches are formed; a stretch must last ``min_rows`` rows.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors import robust, steptimes
from logdoctor.detectors.base import NO_STEP_TIMES, Analyzer, Detection
from logdoctor.detectors.steptimes import StepTimes
from logdoctor.model import Finding, Run
from logdoctor.options import Option, at_least, fraction, int_opt, positive


class SlowdownDetector(Analyzer):
    """Stretches of slow steps against the run's median step time."""

    name = "step-time"
    options: ClassVar[tuple[Option, ...]] = (
        at_least("min_factor", 1.0),
        positive("z_threshold"),
        int_opt("smooth_rows", 1),
        int_opt("min_rows", 1),
        fraction("min_frac"),
        int_opt("max_findings", 1),
    )

    def __init__(
        self,
        *,
        min_factor: float = 1.5,
        z_threshold: float = 5.0,
        smooth_rows: int = 5,
        min_rows: int = 10,
        min_frac: float = 0.03,
        max_findings: int = 3,
    ) -> None:
        self.min_factor = min_factor
        self.z_threshold = z_threshold
        self.smooth_rows = smooth_rows
        self.min_rows = min_rows
        self.min_frac = min_frac
        self.max_findings = max_findings

    def analyze(self, run: Run) -> Detection:
        """LD701 for each slowed stretch (worst first, at most ``max_findings``)."""
        st = steptimes.step_times(run)
        if st is None:
            return Detection(skipped=NO_STEP_TIMES)
        x = np.log(st.seconds)
        base = float(np.median(x))
        sigma = max(robust.MAD_TO_SIGMA * float(np.median(np.abs(x - base))), 1e-6)
        sm = robust.rolling_median(x, self.smooth_rows)
        slow = (sm - base >= np.log(self.min_factor)) & ((sm - base) / sigma >= self.z_threshold)
        starts, ends = robust.runs_of(slow)
        need = max(self.min_rows, min(50, int(self.min_frac * st.n)))
        spans = [(int(a), int(b)) for a, b in zip(starts, ends, strict=True) if b - a >= need and a > 0]
        found = [self._finding(st, a, b, base, sigma) for a, b in spans]
        found.sort(key=lambda f: -float(f.evidence["factor"] or 0.0))
        return Detection(tuple(found[: self.max_findings]))

    def _finding(self, st: StepTimes, a: int, b: int, base: float, sigma: float) -> Finding:
        seg = st.seconds[a:b]
        baseline = float(np.exp(base))
        factor = float(np.median(seg) / baseline)
        first, last = int(st.steps[a]), int(st.steps[b - 1])
        ev = {
            "source": st.source,
            "kind": st.kind,
            "first_step": first,
            "last_step": last,
            "rows": b - a,
            "factor": round(factor, 3),
            "baseline_time_per_step": baseline,
            "stretch_time_per_step": float(np.median(seg)),
            "robust_z": round(float((np.log(np.median(seg)) - base) / sigma), 2),
            "extra_time_fraction": round(float(np.sum(seg - baseline) / np.sum(st.seconds)), 4),
        }
        return codes.finding(
            "LD701",
            f"Steps {first}-{last} ran {factor:.1f}x slower than the run's median step time "
            f"({b - a} rows, from `{st.source}`), a sustained slowdown rather than isolated slow steps.",
            first_step=first,
            last_step=last,
            confidence=float(min(0.99, 0.5 + 0.5 * (1 - self.min_factor / max(factor, 1e-9)))),
            evidence=ev,
        )
