"""Epoch length of a per-epoch step counter, read from a running total the log prints beside it.

A per-epoch counter logged every ``k`` steps (``epoch 1, iter 1000``) shows at most the last logged
value of each epoch, so its largest value underestimates the epoch by up to ``k``. A running total
beside it (``cum. examples``, ``global_step``) tells where the epoch ended:

- the **rate** ``b`` (the total's increase per step: the batch size for an examples counter, 1 for
  a global step) is the median of ``Δtotal / Δstep`` over consecutive rows of one epoch, and it must
  hold for every such pair within 1% (a token count, whose batches vary, gives no length);
- across an epoch boundary (epoch ``E`` at step ``s`` -> epoch ``E+1`` at step ``s'``, the total not
  reset in between) epoch ``E`` held ``N = s·b + Δtotal - s'·b`` units, i.e. ``ceil(N / b)`` steps
  (a partial last batch counts as one step).

Each run of the log (a restart: the counter goes back) gets its own length: appended runs may read
different data. A run without such a boundary takes the length measured in the run before it (a
resume continues it), else the largest per-epoch step of the whole log (one more for a counter from 0), a lower bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from logdoctor.model import EPOCH, LINE_NO, STEP
from logdoctor.structure.counters import is_cumulative_name

#: Largest relative spread of the per-step rate of a running total within epochs.
RATE_TOL = 0.01


@dataclass(frozen=True, slots=True)
class EpochLength:
    """Steps in each epoch of one run, and where the number was read."""

    steps: int
    source: str  # "cumulative_counter" | "global_counter" | "largest_step" | "stated_total"
    column: str | None = None
    rate: float | None = None


def _rate(step: np.ndarray, ep: np.ndarray, total: np.ndarray) -> float | None:
    """The total's increase per step inside epochs, when it is the same at every pair (1%)."""
    ds, dv = np.diff(step), np.diff(total)
    inside = (ep[1:] == ep[:-1]) & (ds > 0) & (dv > 0) & np.isfinite(dv)
    if inside.sum() < 2:
        return None
    r = dv[inside] / ds[inside]
    b = float(np.median(r))
    return b if b > 0 and bool(np.all(np.abs(r / b - 1.0) <= RATE_TOL)) else None


def _boundary_lengths(step: np.ndarray, ep: np.ndarray, total: np.ndarray, b: float) -> list[int]:
    """Steps of each epoch whose end lies between two rows with the total running on."""
    out: list[int] = []
    for i in np.flatnonzero((np.diff(ep) == 1) & (np.diff(total) > 0)):
        units = step[i] * b + (total[i + 1] - total[i]) - step[i + 1] * b
        n = math.ceil(units / b - 1e-6)
        if n >= step[i]:  # never shorter than what the epoch was seen to reach
            out.append(n)
    return out


def _candidates(table: pl.DataFrame) -> list[str]:
    return [
        c
        for c, t in table.schema.items()
        if t.is_numeric() and c not in (STEP, EPOCH, LINE_NO) and is_cumulative_name(c)
    ]


def run_length(run: pl.DataFrame) -> EpochLength:
    """The epoch length of one run (rows in file order, integer ``epoch``, per-epoch ``step``)."""
    step = run[STEP].to_numpy().astype(float)
    ep = run[EPOCH].cast(pl.Float64).to_numpy()
    for col in _candidates(run):
        total = run[col].cast(pl.Float64).fill_null(float("nan")).to_numpy()
        b = _rate(step, ep, total)
        if b is None:
            continue
        lengths = _boundary_lengths(step, ep, total, b)
        if lengths:
            kind = "global_counter" if math.isclose(b, 1.0) and "step" in col.lower() else "cumulative_counter"
            return EpochLength(int(np.median(lengths)), kind, col, b)
    return EpochLength(_largest(step), "largest_step")


def _largest(step: np.ndarray) -> int:
    """The lower bound of an epoch's steps: its largest per-epoch step, one more when the counter
    starts at 0 (``Step 0/6501`` ... ``Step 6500/6501`` counted 6,501 steps)."""
    return int(np.nanmax(step)) + (1 if np.nanmin(step) == 0 else 0)


def _stated(step: np.ndarray, largest: int, stated: int | None) -> EpochLength | None:
    """The counter's own total (``Step 390/400``) as the epoch's length, when the largest step seen
    falls short of it by less than two logging intervals (a global plan is far larger)."""
    if not stated or stated < largest:
        return None
    gaps = np.diff(np.unique(step[np.isfinite(step)]))
    every = float(np.median(gaps)) if gaps.size else 1.0
    return EpochLength(stated, "stated_total") if stated - largest < 2 * every else None


def run_lengths(table: pl.DataFrame, run: np.ndarray, stated: int | None = None) -> list[EpochLength]:
    """The epoch length of each run (``run``: the run index of each row, 0, 1, ...); ``stated``: the
    total the step counter prints beside each step (``s/N``), if any."""
    steps = table[STEP].to_numpy().astype(float)
    largest = _largest(steps)
    fallback = _stated(steps, largest, stated) or EpochLength(largest, "largest_step")
    out: list[EpochLength] = []
    for r in range(int(run.max()) + 1 if run.size else 0):
        got = run_length(table.filter(pl.Series(run == r)))
        if got.column is None:
            before = [x for x in out if x.column is not None]
            got = before[-1] if before else fallback
        out.append(got)
    return out


def describe_length(length: EpochLength) -> str:
    """One note saying where the steps per epoch of a per-epoch counter came from."""
    if length.source == "stated_total":
        return f"steps per epoch {length.steps}: the total the per-epoch step counter prints (s/{length.steps})"
    if length.column is None:
        return (
            f"steps per epoch {length.steps}: the largest per-epoch step seen, a lower bound (a counter "
            "logged every k steps can miss up to k steps of each epoch; no running total tells more)"
        )
    return (
        f"steps per epoch {length.steps} from the running total {length.column} "
        f"({length.rate:g} per step): where the next epoch's first row puts the end of the previous one"
    )
