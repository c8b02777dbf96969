"""Non-finite loss (LD001): NaN/inf in the loss column, where it starts, how long, and whether it recovered."""

from __future__ import annotations

import numpy as np

from logdoctor import codes
from logdoctor.detectors import robust
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.model import LINE_NO, LOSS, STEP, Run


class NonFiniteDetector(Analyzer):
    """NaN/inf in the loss column (only the loss: NaN timings elsewhere are no training fault)."""

    name = "nonfinite"

    def analyze(self, run: Run) -> Detection:
        """LD001: the first bad step, count, runs of bad steps and whether training recovered."""
        t = run.table.select(STEP, LOSS, LINE_NO).drop_nulls(LOSS)
        loss = t[LOSS].to_numpy()
        bad = ~np.isfinite(loss)
        if not bad.any():
            return Detection()
        steps = t[STEP].to_numpy()
        starts, ends = robust.runs_of(bad)
        first, last = int(starts[0]), int(ends[-1] - 1)
        recovered = bool(np.isfinite(loss[last + 1 :]).any())
        n_bad = int(bad.sum())
        ev = {
            "first_step": int(steps[first]),
            "last_step": int(steps[last]),
            "n_nonfinite": n_bad,
            "fraction": round(n_bad / loss.size, 6),
            "n_runs": int(starts.size),
            "longest_run": int((ends - starts).max()),
            "n_nan": int(np.isnan(loss).sum()),
            "n_inf": int(np.isinf(loss).sum()),
            "recovered": recovered,
            "all_nonfinite": bool(bad.all()),
        }
        if bad.all():
            msg = f"Every logged loss ({n_bad}) is NaN/inf: training diverged from the first logged step {steps[0]}."
        else:
            msg = f"The loss is NaN/inf at {n_bad} step(s) in {starts.size} run(s), first at step {steps[first]}; " + (
                "training logged finite losses again afterwards." if recovered else "it never recovered."
            )
        line = t[LINE_NO][first]
        return Detection(
            (
                codes.finding(
                    "LD001",
                    msg,
                    first_step=int(steps[first]),
                    last_step=int(steps[last]),
                    line=int(line) if line is not None else None,
                    evidence=ev,
                ),
            )
        )
