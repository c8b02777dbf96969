"""Non-finite values beside a finite loss: NaN/inf grad norm (LD011) and a NaN/inf eval metric (LD009).

A NaN/inf grad norm on a step whose loss is finite means the update was skipped (a dynamic fp16 loss
scaler) or wrote NaN into the weights; a handful while the scaler calibrates is normal. The null is
the fp16 one (``fp16overflows.late_null``): a settled scaler overflows about once per growth window
(100 steps, the shortest common default), so more non-finite grad norms after the first window than
that Poisson null allows (tail < 0.001, at least 3) is a WARNING, fewer are information. Any format:
the grad norm is the canonical column whatever the log called it.

An evaluation whose loss (or any eval metric) is NaN/inf: the model assigns probability 0 to some
held-out target, or its weights are broken. ERROR when the last evaluation is still non-finite,
WARNING when a later one recovered.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import polars as pl

from logdoctor import codes
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.detectors.fp16overflows import ALPHA, MIN_LATE, NULL_WINDOW, late_null
from logdoctor.model import GRAD_NORM, LINE_NO, LOSS, STEP, Finding, Run, Severity
from logdoctor.options import Option, fraction, positive


class NonFiniteMetricsDetector(Analyzer):
    """LD011 (grad norm NaN/inf while the loss is finite) and LD009 (NaN/inf eval metric)."""

    name = "nonfinite-metrics"
    options: ClassVar[tuple[Option, ...]] = (positive("window"), fraction("alpha", high_open=True))

    def __init__(self, *, window: float = NULL_WINDOW, alpha: float = ALPHA) -> None:
        self.window = window
        self.alpha = alpha

    def analyze(self, run: Run) -> Detection:
        """At most one LD011, one LD009 per eval column."""
        return Detection((*self._grad_norm(run), *self._evals(run)))

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
            + (f"{k} after the first {self.window:g} steps, more than the null of one per {self.window:g} "
               f"steps allows (expected {lam:.1f}, p={p:.2g})." if warn
               else f"{k} after the first {self.window:g} steps, within the null of one per {self.window:g} steps.")
        )
        ev = {"nonfinite_grad_norm_steps": n, "first_step": first, "after_calibration": k,
              "expected_by_null": round(lam, 3), "p_value": p, "null_window": self.window}
        return [codes.finding("LD011", msg, first_step=first, last_step=int(steps[bad][-1]), confidence=0.9,
                              evidence=ev, **({} if warn else {"severity": Severity.INFO}))]

    def _evals(self, run: Run) -> list[Finding]:
        """One LD009 for every eval column with a NaN/inf value (one symptom, one finding)."""
        cols, firsts, still, worst = [], [], False, ""
        for col in run.evals.columns:
            if col in (STEP, LINE_NO):
                continue
            t = run.evals.select(STEP, col).drop_nulls(col)
            v = t[col].cast(float).to_numpy()
            bad = ~np.isfinite(v)
            if bad.any():
                cols.append(f"{col} ({int(bad.sum())} of {v.size})")
                firsts.append(int(t[STEP].to_numpy()[bad][0]))
                still |= bool(bad[-1])
                worst = worst or ("NaN" if np.isnan(v[bad][0]) else "inf")
        if not cols:
            return []
        first = min(firsts)
        loss = run.table.filter(pl.col(STEP) <= first)[LOSS].drop_nulls().cast(float).to_numpy()
        trained_nan = bool((~np.isfinite(loss)).any())
        msg = (
            f"Evaluation metrics are NaN/inf ({worst} first): {', '.join(cols)}, first at step {first:,}"
            + ("; the training loss was already non-finite by then (LD001), which this follows." if trained_nan
               else ", the last evaluation included: the model as it stands is broken on held-out data." if still
               else "; a later evaluation recovered.")
        )
        ev = {"metrics": ", ".join(cols), "first_step": first, "last_eval_nonfinite": still,
              "follows_nonfinite_loss": trained_nan}
        sev = Severity.INFO if trained_nan else Severity.ERROR if still else Severity.WARNING
        return [codes.finding("LD009", msg, first_step=first, confidence=0.95, evidence=ev, severity=sev)]
