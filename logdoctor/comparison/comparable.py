"""Are two runs the same experiment? Reasons they are not, so that compare refuses nonsense.

The configurations' model and task (W&B config, MLflow params) must agree where both state them.

Each limit sits far beyond what a change of batching, packing or seed moves: such a change keeps the
model and data, so the loss at the first steps (set by the untrained model, about ln(vocabulary) for
a language model) matches within a few percent, and bucketing or packing moves steps per epoch and
tokens per step by tens of percent (the bundled static/bucketed pair: 162 vs 207 steps per epoch).
Two unrelated experiments differ by multiples.
"""

from __future__ import annotations

import numpy as np

from logdoctor.model import LOSS, TOKENS, Report

#: The first rows whose median is a run's starting loss (at least 3, at most 50, 5% of the run).
FIRST_FRACTION = 0.05
#: Starting losses further apart than this factor are not one model on one task.
LOSS_SCALE_LIMIT = 2.0
#: Steps per epoch or tokens per step further apart than this factor are not one setup.
SETUP_LIMIT = 3.0


def _ratio(a: float, b: float) -> float:
    lo, hi = sorted((abs(a), abs(b)))
    return float("inf") if lo == 0 else hi / lo


def starting_loss(report: Report) -> float | None:
    """The median loss over a run's first rows, None without finite positive values."""
    loss = report.run.table[LOSS].to_numpy().astype(float)
    loss = loss[np.isfinite(loss)]
    if loss.size < 3:
        return None
    k = int(min(50, max(3, FIRST_FRACTION * loss.size)))
    first = float(np.median(loss[:k]))
    return first if first > 0 else None


def _tokens_per_step(report: Report) -> float | None:
    if not report.run.has(TOKENS):
        return None
    tok = report.run.table[TOKENS].drop_nulls().to_numpy().astype(float)
    tok = tok[np.isfinite(tok) & (tok > 0)]
    return float(np.median(tok)) if tok.size else None


#: Configuration facts that name the experiment: runs that state different values are not comparable.
IDENTITY_FACTS = ("model", "task")


def _identity(report: Report) -> dict[str, str]:
    """The model and task a run's configuration names, compared by their last path component."""
    return {
        f.name: str(f.value).rstrip("/").rsplit("/", 1)[-1].lower()
        for f in report.meta.config_facts
        if f.name in IDENTITY_FACTS
    }


def reasons(base: Report, cand: Report) -> list[str]:
    """Why ``cand`` is not the same experiment as ``base`` (empty when nothing says so)."""
    ib, ic = _identity(base), _identity(cand)
    out = [
        f"the configurations name another {name} ({ib[name]} vs {ic[name]})"
        for name in IDENTITY_FACTS
        if name in ib and name in ic and ib[name] != ic[name]
    ]
    lb, lc = starting_loss(base), starting_loss(cand)
    if lb is not None and lc is not None and _ratio(lb, lc) > LOSS_SCALE_LIMIT:
        out.append(f"the loss starts at {lb:.4g} vs {lc:.4g} ({_ratio(lb, lc):.1f}x apart): another model or task")
    sb, sc = base.series.steps_per_epoch, cand.series.steps_per_epoch
    if sb and sc and _ratio(sb, sc) > SETUP_LIMIT:
        out.append(f"{sb:,.0f} vs {sc:,.0f} steps per epoch ({_ratio(sb, sc):.1f}x apart): another dataset")
    tb, tc = _tokens_per_step(base), _tokens_per_step(cand)
    if tb is not None and tc is not None and _ratio(tb, tc) > SETUP_LIMIT:
        out.append(f"{tb:,.0f} vs {tc:,.0f} tokens per step ({_ratio(tb, tc):.1f}x apart): another batch setup")
    return out
