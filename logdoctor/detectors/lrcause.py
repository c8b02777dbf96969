"""The one place that names an lr change as the cause of a loss event starting at it.

A divergence, NaN, spike or level change whose first step falls at (or a few rows after) a logged lr
jump gets the jump in its message and evidence ("the lr jumped from 0.38 to 30 at step 320; the loss
diverged 2 steps later"); a level change at an lr drop is linked to the drop the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from logdoctor.detectors import lrevents
from logdoctor.detectors.lrevents import LrChange
from logdoctor.model import STEP, Finding, Run

#: Codes of loss events an lr rise can cause, and those an lr drop can (a level change).
RISE_EFFECTS = frozenset({"LD001", "LD002", "LD101", "LD301", "LD403", "LD302", "LD401"})
DROP_EFFECTS = frozenset({"LD301", "LD302"})
#: A loss event is linked when it starts this many rows before the change (a changepoint's
#: boundary is approximate) up to ``AFTER`` rows after it.
BEFORE, AFTER = 2, 10


def _cause(steps: np.ndarray, f: Finding, found: Sequence[LrChange]) -> LrChange | None:
    if f.first_step is None:
        return None
    row = int(np.searchsorted(steps, f.first_step))
    best: LrChange | None = None
    for c in found:
        effects = RISE_EFFECTS if c.is_rise else DROP_EFFECTS
        if f.code not in effects:
            continue
        lag = row - int(np.searchsorted(steps, c.step))
        if -BEFORE <= lag <= AFTER and (best is None or abs(c.step - f.first_step) < abs(best.step - f.first_step)):
            best = c
    return best


def _linked(f: Finding, c: LrChange) -> Finding:
    lag = int(f.first_step or c.step) - c.step
    when = "at that step" if lag <= 0 else f"{lag} step{'s' if lag != 1 else ''} later"
    what = "diverged" if f.code in ("LD001", "LD002") else "changed level"
    if f.code == "LD101":
        what = "spiked"
    message = f"{c.describe().capitalize()}; the loss {what} {when}. {f.message}"
    ev = {
        **f.evidence,
        "lr_cause_step": c.step,
        "lr_cause_before": c.before,
        "lr_cause_after": c.after,
        "lr_cause_ratio": round(c.ratio, 4),
        "lr_cause_lag_steps": lag,
    }
    return dataclasses.replace(f, message=message, evidence=ev)


def attach(run: Run, findings: Sequence[Finding]) -> list[Finding]:
    """Return ``findings`` with every loss event that starts at an lr change linked to it."""
    found = lrevents.changes(run)
    if not found:
        return list(findings)
    steps = run.table[STEP].to_numpy()
    out: list[Finding] = []
    for f in findings:
        c = _cause(steps, f, found)
        out.append(_linked(f, c) if c is not None else f)
    return out
