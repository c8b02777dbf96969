"""NaN/inf evaluation values (LD008): an eval loss that ranks no checkpoint."""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor import codes
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.model import LINE_NO, STEP, Finding, Run

#: Eval columns that are timings or counts, never a metric (HF ``eval_runtime``...).
_NOT_METRIC = ("runtime", "per_second", "samples", "steps_per", "epoch", "time", "tokens")


def _metric_columns(evals: pl.DataFrame) -> list[str]:
    """The float eval columns that are metrics (not step, line, timings or throughput)."""
    return [
        c
        for c, dtype in evals.schema.items()
        if c not in (STEP, LINE_NO) and dtype.is_float() and not any(w in c.lower() for w in _NOT_METRIC)
    ]


class EvalNonFiniteDetector(Analyzer):
    """Every eval metric column with NaN/inf values: one finding per column, first and last step."""

    name = "eval-nonfinite"

    def analyze(self, run: Run) -> Detection:
        """LD008 per eval metric column that holds a NaN or an infinity."""
        ev = run.evals
        if ev.height == 0:
            return Detection()
        return Detection(tuple(f for c in _metric_columns(ev) if (f := self._column(ev, c)) is not None))

    @staticmethod
    def _column(ev: pl.DataFrame, col: str) -> Finding | None:
        t = ev.select(STEP, LINE_NO, col).drop_nulls(col)
        vals = t[col].to_numpy().astype(float)
        bad = ~np.isfinite(vals)
        n_bad = int(bad.sum())
        if n_bad == 0:
            return None
        idx = np.flatnonzero(bad)
        steps = t[STEP].to_list()
        first, last = steps[int(idx[0])], steps[int(idx[-1])]
        kinds = " and ".join(k for k, n in (("NaN", np.isnan(vals).sum()), ("inf", np.isinf(vals).sum())) if n)
        where = f"at step {first}" if first == last else f"from step {first} to {last}"
        if n_bad == vals.size:
            msg = f"Every {col} of this run ({n_bad} evaluations) is {kinds}, {where}."
        else:
            msg = f"{col} is {kinds} at {n_bad} of {vals.size} evaluations, {where}."
        line = t[LINE_NO][int(idx[0])]
        return codes.finding(
            "LD008",
            msg,
            first_step=int(first) if first is not None else None,
            last_step=int(last) if last is not None else None,
            line=int(line) if line is not None else None,
            evidence={
                "column": col,
                "n_nonfinite": n_bad,
                "n_evals": int(vals.size),
                "n_nan": int(np.isnan(vals).sum()),
                "n_inf": int(np.isinf(vals).sum()),
            },
        )
