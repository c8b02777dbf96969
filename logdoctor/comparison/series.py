"""Per-run arrays a comparison needs: the loss by step, tokens seen, and tokens per second."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from logdoctor.diagnosis.lengthstats import column
from logdoctor.model import LOSS, PAD_FRAC, STEP, THROUGHPUT, TOKENS, Run

#: Columns that hold a cumulative token count (a logged ``tokens`` column may be one too).
CUMULATIVE_TOKENS = (
    "tokens_cumulative",
    "num_input_tokens_seen",
    "consumed_tokens",
    "tokens_seen",
    "total_tokens",
    "num_tokens",
)
#: Columns that hold a wall clock in seconds (time since start or a Unix time).
CLOCKS = (
    "elapsed",
    "elapsed_s",
    "wall",
    "wall_time",
    "timestamp",
    "_timestamp",
    "runtime",
    "_runtime",
    "time_s",
    "train_runtime",
)
#: Columns that hold the duration of one step, in seconds or (``_ms``) milliseconds.
DURATIONS = (
    "step_time",
    "iter_time",
    "time_per_step",
    "dt",
    "step_time_ms",
    "iter_time_ms",
    "dt_ms",
    "time_ms",
    "elapsed_time_per_iteration_ms",
)


@dataclass(frozen=True, slots=True)
class RunSeries:
    """The arrays of one run (rows with a finite loss only, sorted by step).

    Attributes:
        steps / loss: the training loss by step.
        tokens: tokens seen up to each row, None when the log holds no token count.
        tok_s: tokens per second (one value per usable row), None when unknown.
        tok_s_source: where tok_s came from ("throughput field", "tokens / elapsed", ...).
        pad_frac: the logged padding fractions (finite), None when not logged.
    """

    steps: np.ndarray
    loss: np.ndarray
    tokens: np.ndarray | None
    tok_s: np.ndarray | None
    tok_s_source: str
    pad_frac: np.ndarray | None


def _increasing(x: np.ndarray) -> bool:
    """A running total: finite, rising at almost every row, and ending far above where it began."""
    d = np.diff(x)
    return bool(x.size > 2 and np.all(np.isfinite(x)) and np.mean(d > 0) >= 0.95 and x[-1] > 5 * max(x[0], 1.0))


def _step_gaps(steps: np.ndarray) -> np.ndarray:
    """Steps each row stands for (the gap since the previous row; the first as the median gap)."""
    d = np.diff(steps).astype(np.float64)
    first = float(np.median(d)) if d.size else 1.0
    return np.concatenate(([max(first, 1.0)], np.maximum(d, 1.0)))


def tokens_seen(run: Run, steps: np.ndarray) -> np.ndarray | None:
    """Cumulative tokens at each step: a running-total column, or per-step tokens summed."""
    for name in (*CUMULATIVE_TOKENS, TOKENS):
        x = column(run, name)
        if x is not None and _increasing(x):
            return x
    per = column(run, TOKENS)
    if per is None or not np.any(np.isfinite(per) & (per > 0)):
        return None
    per = np.where(np.isfinite(per), per, np.nanmedian(per))
    return np.cumsum(per * _step_gaps(steps))


def _seconds(run: Run) -> tuple[np.ndarray | None, str, bool]:
    """(values, column, is_clock) of the first clock or step-duration column the run has."""
    for name in CLOCKS:
        x = column(run, name)
        if x is not None:
            return x, name, True
    for name in DURATIONS:
        x = column(run, name)
        if x is not None:
            return (x / 1000.0 if name.endswith("ms") else x), name, False
    return None, "", False


def throughput(run: Run, steps: np.ndarray, tokens: np.ndarray | None) -> tuple[np.ndarray | None, str]:
    """Tokens per second per row: the throughput field, else tokens over the logged time."""
    field = column(run, THROUGHPUT)
    if field is not None and np.any(np.isfinite(field) & (field > 0)):
        return field[np.isfinite(field) & (field > 0)], "throughput field"
    secs, name, is_clock = _seconds(run)
    if secs is None or tokens is None:
        return None, ""
    d_tok = np.diff(np.concatenate(([0.0], tokens)))
    dt = np.diff(np.concatenate(([np.nan], secs))) if is_clock else secs * _step_gaps(steps)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = d_tok / dt
    ok = np.isfinite(rate) & (rate > 0)
    return (rate[ok], f"tokens / {name}") if ok.any() else (None, "")


def run_series(run: Run) -> RunSeries:
    """The arrays of one run."""
    t = run.table
    loss = t[LOSS].cast(float).fill_null(float("nan")).to_numpy()
    steps = t[STEP].to_numpy().astype(np.float64)
    tokens = tokens_seen(run, steps)
    tok_s, source = throughput(run, steps, tokens)
    pad = column(run, PAD_FRAC)
    ok = np.isfinite(loss)
    return RunSeries(
        steps=steps[ok],
        loss=loss[ok],
        tokens=None if tokens is None else tokens[ok],
        tok_s=tok_s,
        tok_s_source=source,
        pad_frac=None if pad is None or not np.isfinite(pad).any() else pad[np.isfinite(pad)],
    )
