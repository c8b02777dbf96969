"""NaN/inf grad norm beside a finite loss (LD011); NaN/inf eval metrics are detectors/evalnonfinite.py (LD009).

A NaN/inf grad norm on a step whose loss is finite means the update was skipped (a dynamic fp16 loss
scaler) or wrote NaN into the weights; a handful while the scaler calibrates is normal. The null is
the fp16 one (``fp16overflows.late_null``): a settled scaler overflows about once per growth window
(100 steps, the shortest common default), so more non-finite grad norms after the first window than
that Poisson null allows (tail < 0.001, at least 3) is a WARNING, fewer are information. Any format:
the grad norm is the canonical column whatever the log called it.

"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors.base import NO_GRAD_NORM, Analyzer, Detection
from logdoctor.detectors.fp16overflows import ALPHA, MIN_LATE, NULL_WINDOW, late_null
from logdoctor.model import GRAD_NORM, LOSS, STEP, Finding, Run, Severity
from logdoctor.options import Option, fraction, positive


class NonFiniteMetricsDetector(Analyzer):
    """LD011: the grad norm is NaN/inf while the loss is finite, beyond the fp16 scaler's null."""

    name = "nonfinite-metrics"
    options: ClassVar[tuple[Option, ...]] = (positive("window"), fraction("alpha", high_open=True))

    def __init__(self, *, window: float = NULL_WINDOW, alpha: float = ALPHA) -> None:
        self.window = window
        self.alpha = alpha

    def analyze(self, run: Run) -> Detection:
        """At most one LD011."""
        return Detection(tuple(self._grad_norm(run)), skipped="" if run.has(GRAD_NORM) else NO_GRAD_NORM)

    def _grad_norm(self, run: Run) -> list[Finding]:
        if not run.has(GRAD_NORM):
            return []
        t = run.table.select(STEP, LOSS, GRAD_NORM).drop_nulls(GRAD_NORM)
        gn, loss = t[GRAD_NORM].cast(float).to_numpy(), t[LOSS].cast(float).to_numpy()
        bad = ~np.isfinite(gn) & np.isfinite(loss)
        if not bad.any():
            return []
        steps = t[STEP].to_numpy()
        settled = steps >= steps[0] + self.window  # the scaler's first growth window: calibration
        k = int((bad & settled).sum())
        span = float(steps[-1] - steps[0] - self.window) if steps.size else 0.0
        warn, lam, p = late_null(k, max(span, 0.0), 1, self.window, self.alpha, MIN_LATE)
        first = int(steps[bad][0])
        n = int(bad.sum())
        msg = (
            f"The grad norm is NaN/inf on {n} step(s) (first at step {first:,}) while the loss stays finite: "
            "those updates were skipped (a dynamic fp16 loss scaler) or wrote NaN into the weights; "
            + f"{k} after the first {self.window:g} steps, {'more' if warn else 'no more'} than a scaler probing "
            f"a higher scale once per {self.window:g} steps gives (about {lam:.1f})."
        )
        ev = {
            "nonfinite_grad_norm_steps": n,
            "first_step": first,
            "after_calibration": k,
            "expected_by_null": round(lam, 3),
            "p_value": p,
            "null_window": self.window,
        }
        return [
            codes.finding(
                "LD011",
                msg,
                first_step=first,
                last_step=int(steps[bad][-1]),
                confidence=0.9,
                evidence=ev,
                **({} if warn else {"severity": Severity.INFO}),
            )
        ]
