"""Eval series as their own series: pick the run's main eval loss and read it as (steps, values)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from logdoctor.detectors.robust import FloatArray
from logdoctor.model import LINE_NO, STEP, Run

#: Eval columns that are a loss (lower is better), best first. ``val`` is nanoGPT's ``val X``,
#: ``lm_loss_value`` Megatron's validation line, ``ce_mean_words`` Marian's valid cost.
_LOSS_NAMES = (
    "eval_loss", "val_loss", "valid_loss", "validation_loss", "dev_loss", "val", "lm_loss_value", "ce_mean_words",
)
#: Perplexity columns (lower is better), used only when no eval loss exists.
_PPL_RE = re.compile(r"^(eval|val|valid|validation|dev)_?(\w+_)?(ppl|perplexity)$")
_DEV_LOSS_RE = re.compile(r"^dev_\w+_loss$")
_SKIP_RE = re.compile(r"(^|_)(test|best|train|predict)(_|$)")


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
    """The eval column that stands for the validation loss (or perplexity), or None."""
    cols = [c for c in run.evals.columns if c not in (STEP, LINE_NO) and not _SKIP_RE.search(c)]
    if not cols:
        return None
    for name in _LOSS_NAMES:
        if name in cols:
            return name
    dev = sorted(c for c in cols if _DEV_LOSS_RE.match(c))
    if dev:
        return dev[0]
    return next((c for c in cols if _PPL_RE.match(c)), None)


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
    return bool(_PPL_RE.match(column))


def main_eval_loss(run: Run) -> EvalSeries | None:
    """The run's validation loss as a series, or None when the log carries none."""
    col = eval_loss_column(run)
    return None if col is None else eval_series(run, col)
