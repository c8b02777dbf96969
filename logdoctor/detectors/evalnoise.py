"""Eval metrics too noisy to rank checkpoints by (LD415), on the run's evaluation series.

For each eval metric: the point-to-point noise (robust, from first differences, so a trend does not
count as noise) is compared with the improvement the metric shows over the run; when the noise is a
large fraction of it and several checkpoints far apart are within noise of the best, picking "the
best checkpoint" by this metric is a coin toss.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import polars as pl

from logdoctor import codes, vocab
from logdoctor.detectors import robust
from logdoctor.detectors.base import NO_EVAL, Analyzer, Detection
from logdoctor.model import EPOCH, LINE_NO, STEP, Finding, Run
from logdoctor.options import Option, fraction, int_opt, positive

#: Name fragments of eval columns that are bookkeeping, not quality metrics.
NOT_METRICS = (
    "runtime",
    "per_second",
    "samples",
    "steps",
    "wps",
    "wpb",
    "bsz",
    "count",
    "time",
    "num_tokens",
    "best",
    "length_ratio",
    "decode",
    "sec_per",
    "_sec",
    "lr",
    "translation",
    "stalled",
)


def metric_columns(evals: pl.DataFrame) -> list[str]:
    """The quality-metric columns of an evals table."""
    skip = {STEP, LINE_NO, EPOCH}
    return [
        c
        for c in evals.columns
        if c not in skip and evals[c].dtype.is_numeric() and not any(k in c.lower() for k in NOT_METRICS)
    ]


def _residual_sigma(v: np.ndarray) -> float:
    """Robust noise of a short series: MAD of its residuals around a 3-point rolling median, scaled
    so that white noise gives its sigma on average (0.385: by simulation, 20 points; a smooth fall, or
    one jump, leaves almost no residual)."""
    resid = v - robust.rolling_median(v, 3)
    return float(robust.MAD_TO_SIGMA * np.median(np.abs(resid)) / 0.385)


class EvalNoiseDetector(Analyzer):
    """LD415 per eval metric whose noise swamps its improvement."""

    name = "eval-noise"
    options: ClassVar[tuple[Option, ...]] = (
        int_opt("min_points", 3),
        fraction("noise_frac"),
        int_opt("contenders", 2),
        positive("z"),
    )

    def __init__(self, *, min_points: int = 8, noise_frac: float = 0.35, contenders: int = 3, z: float = 2.0) -> None:
        self.min_points = min_points
        self.noise_frac = noise_frac
        self.contenders = contenders
        self.z = z

    def analyze(self, run: Run) -> Detection:
        """One info finding per noisy metric."""
        ev = run.evals
        if ev.height == 0 or STEP not in ev.columns:
            return Detection(skipped=NO_EVAL)
        out = []
        for col in metric_columns(ev):
            sub = ev.select(STEP, pl.col(col).cast(pl.Float64)).drop_nulls().sort(STEP)
            v = sub[col].to_numpy()
            ok = np.isfinite(v)
            found = self._judge(col, sub[STEP].to_numpy()[ok], v[ok])
            if found is not None:
                out.append(found)
        return Detection(tuple(out))

    def _judge(self, col: str, steps: np.ndarray, v: np.ndarray) -> Finding | None:
        if v.size < self.min_points:
            return None
        sign = -1.0 if vocab.direction(col) is vocab.Direction.DOWN else 1.0  # unknown: higher is better
        score = sign * v  # higher is better
        sigma = _residual_sigma(score)
        head = float(np.median(score[: max(2, v.size // 4)]))
        best_i = int(np.argmax(score))
        gain = float(score[best_i] - head)
        if sigma <= 0 or gain <= 0:
            return None
        close = np.flatnonzero(score >= score[best_i] - self.z * np.sqrt(2) * sigma)
        spread = int(steps[close].max() - steps[close].min())
        frac = sigma / gain
        if frac < self.noise_frac or close.size < self.contenders or spread < 0.25 * np.ptp(steps):
            return None
        ev = {
            "metric": col,
            "points": int(v.size),
            "noise_sigma": round(sigma, 6),
            "improvement": round(gain, 6),
            "noise_fraction": round(frac, 4),
            "best_step": int(steps[best_i]),
            "best_value": float(v[best_i]),
            "checkpoints_within_noise": int(close.size),
            "their_step_spread": spread,
        }
        return codes.finding(
            "LD415",
            f"{col} is too noisy to rank checkpoints by: its step-to-step noise ({sigma:.3g}) is "
            f"{frac:.0%} of its improvement over the run, and {close.size} checkpoints up to {spread:,} "
            f"steps apart are within noise of the best (step {steps[best_i]}).",
            first_step=int(steps[close].min()),
            last_step=int(steps[close].max()),
            confidence=0.7,
            evidence=ev,
        )
