"""Seeded synthetic loss curves and a Run builder shared by the detector tests."""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor.model import Run, RunMeta, validate_run


def make_run(
    loss: np.ndarray,
    steps: np.ndarray | None = None,
    steps_per_epoch: int | None = None,
    **columns: np.ndarray,
) -> Run:
    """A validated Run from arrays (steps default to 1..n, line numbers to 10 + row)."""
    n = len(loss)
    st = np.arange(1, n + 1) if steps is None else np.asarray(steps)
    data = {
        "step": st.astype(np.int64),
        "loss": np.asarray(loss, dtype=float),
        "line_no": np.arange(n) + 10,
    }
    data.update({k: np.asarray(v, dtype=float) for k, v in columns.items()})
    return Run(
        validate_run(pl.DataFrame(data)),
        RunMeta(path="synthetic", format="test", steps_per_epoch=steps_per_epoch),
    )


def healthy(
    n: int,
    seed: int,
    *,
    start: float = 10.0,
    floor: float = 2.0,
    tau: float = 300.0,
    noise: float = 0.03,
) -> np.ndarray:
    """Exponential decay to ``floor`` with multiplicative log-normal noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return (floor + (start - floor) * np.exp(-t / tau)) * np.exp(rng.normal(0, noise, n))


def warmup_cosine(n: int, seed: int, warmup: int = 200) -> np.ndarray:
    """Loss of a run with lr warm-up (flat, then falling) and cosine decay (slower fall late)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    lr = np.where(t < warmup, t / warmup, 0.5 * (1 + np.cos(np.pi * (t - warmup) / (n - warmup))))
    progress = np.cumsum(lr) / np.sum(lr)
    return (2.0 + 8.0 * np.exp(-3 * progress)) * np.exp(rng.normal(0, 0.03, n))


def running_average(n: int, seed: int, epoch: int = 500) -> np.ndarray:
    """A loss logged as a running average that resets every epoch (noise shrinks in the epoch)."""
    raw = healthy(n, seed, noise=0.15)
    out = np.empty(n)
    for a in range(0, n, epoch):
        seg = raw[a : a + epoch]
        out[a : a + epoch] = np.cumsum(seg) / np.arange(1, seg.size + 1)
    return out


def sawtooth(n: int, seed: int, period: int = 200, amp: float = 0.1, jitter: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Healthy decay times a sawtooth whose period jitters by +-``jitter`` steps, and its phase."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(period - jitter, period + jitter + 1, n // max(1, period - jitter) + 2)
    phase = np.concatenate([np.arange(k) / k for k in lens])[:n]
    return healthy(n, seed + 1000) * np.exp(amp * phase), phase
