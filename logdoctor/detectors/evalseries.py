"""Eval series as their own series: pick the run's main eval loss and read it as (steps, values)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from logdoctor import vocab
from logdoctor.detectors.robust import FloatArray
from logdoctor.model import LINE_NO, STEP, Run


@dataclass(frozen=True, slots=True)
class EvalSeries:
    """One eval metric over the run, in step order (rows without a step or a finite value dropped)."""

    name: str
    steps: FloatArray
    values: FloatArray

    @property
    def n(self) -> int:
        """Number of eval points."""
        return int(self.values.size)


def eval_loss_column(run: Run) -> str | None:
    """The eval column that stands for the validation loss (or perplexity), or None: the best ranked
    by :func:`logdoctor.vocab.eval_loss_rank` (a held-out split's total loss first, a test loss last)."""
    ranked = [(rank, c) for c in run.evals.columns if c not in (STEP, LINE_NO) and (rank := vocab.eval_loss_rank(c))]
    return min(ranked)[1] if ranked else None


def eval_series(run: Run, column: str) -> EvalSeries:
    """``column`` of ``run.evals`` as finite (step, value) points; the last write of a step wins."""
    ev = run.evals
    if column not in ev.columns or STEP not in ev.columns or ev.height == 0:
        return EvalSeries(column, np.empty(0), np.empty(0))
    steps = ev[STEP].cast(float).fill_null(np.nan).to_numpy().astype(float)
    vals = ev[column].cast(float).fill_null(np.nan).to_numpy().astype(float)
    ok = np.isfinite(steps) & np.isfinite(vals)
    steps, vals = steps[ok], vals[ok]
    # one value per step (repeated evals of a step after a resume: the later one), in step order
    _, last = np.unique(steps[::-1], return_index=True)
    keep = np.sort(steps.size - 1 - last)
    order = np.argsort(steps[keep], kind="stable")
    return EvalSeries(column, steps[keep][order], vals[keep][order])


def is_perplexity(column: str) -> bool:
    """True when the eval loss column is a perplexity (exp of a loss), not a loss."""
    return vocab.classify(column).is_perplexity


def main_eval_loss(run: Run) -> EvalSeries | None:
    """The run's validation loss as a series, or None when the log carries none."""
    col = eval_loss_column(run)
    return None if col is None else eval_series(run, col)
