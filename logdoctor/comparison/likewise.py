"""Like with like: when a run's loss follows batch length in a cycle, compare the loss over whole cycles."""

from __future__ import annotations

import numpy as np

from logdoctor.comparison.series import RunSeries
from logdoctor.model import Report


def length_cycle(report: Report) -> tuple[float, str] | None:
    """The steps over which a run's batch lengths (and so its loss) go round once, and what that is.

    Sorted or static batching repeats with the epoch; length-grouped megabatches with the megabatch.
    A run whose batch order is random has no cycle (its loss-length link averages out in any window).
    """
    v, spe = report.verdict, report.series.steps_per_epoch
    if v.batching == "grouped":
        mp = v.evidence.get("megabatch_period")
        if isinstance(mp, int | float) and not isinstance(mp, bool) and mp > 1:
            return float(mp), "megabatches"
    if v.batching in ("sorted", "static", "grouped") and spe:
        return float(spe), "epochs"
    return None


def tokens_per_step(s: RunSeries) -> float | None:
    """The median tokens one step adds, None without a token count."""
    if s.tokens is None or s.tokens.size < 2:
        return None
    d = np.diff(s.tokens) / np.maximum(np.diff(s.steps), 1)
    d = d[np.isfinite(d) & (d > 0)]
    return float(np.median(d)) if d.size else None


def cycles(base: Report, cand: Report, sb: RunSeries, sc: RunSeries) -> tuple[float | None, float | None, str]:
    """The longest cycle in steps and in tokens of the two runs, and the sentence the table prints."""
    got = [(length_cycle(r), s, who) for r, s, who in ((base, sb, "baseline"), (cand, sc, "candidate"))]
    known = [(c, s, who) for c, s, who in got if c is not None]
    if not known:
        return None, None, ""
    steps = max(c[0] for c, _, _ in known)
    tok = [c[0] * t for c, s, _ in known if (t := tokens_per_step(s)) is not None]
    parts = [f"the {who}'s loss follows batch length in {what} of {n:,.0f} steps" for (n, what), _, who in known]
    why = f"loss compared over windows of at least {steps:,.0f} steps (whole cycles, like with like): " + "; ".join(
        parts
    )
    return steps, (max(tok) if tok else None), why
