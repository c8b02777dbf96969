"""Abrupt level changes of the loss (LD301) and accuracy (LD302), in O(n) on a million steps.

Search: ``cpsearch.fast_breakpoints`` (exact penalised L2 on block means, refined locally).

Judgement: a smoothly falling loss is cut by the search into a staircase, so each candidate is
tested as a *discontinuity*: a straight line is fitted on each side in log(step) (loss curves are
close to power laws) and the two lines are compared at the boundary. Only jumps that are large
against the extrapolation error (t), the per-step noise (delta_sigma) and the level (relative
change) are reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors import robust
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.detectors.cpsearch import fast_breakpoints
from logdoctor.detectors.robust import FloatArray, Series
from logdoctor.model import ACC, LOSS, Finding, Run, Severity
from logdoctor.options import Option, at_least, fraction, int_opt, positive

#: Fewer rows than this: no changepoint analysis (reported once by the too-short analyzer).
MIN_POINTS = 30


@dataclass(frozen=True, slots=True)
class Jump:
    """A candidate breakpoint judged as a discontinuity."""

    row: int
    before: float
    after: float
    jump: float
    t: float
    delta_sigma: float


def _side_fit(x: FloatArray, y: FloatArray, at: float) -> tuple[float, float]:
    """Least-squares line through (x, y) evaluated at ``at``, with the standard error there."""
    if x.size < 3 or np.ptp(x) == 0:
        m = float(np.mean(y))
        return m, float(np.std(y) / np.sqrt(max(1, y.size)) + 1e-12)
    xm = x.mean()
    sxx = float(np.sum((x - xm) ** 2))
    slope = float(np.sum((x - xm) * (y - y.mean())) / sxx)
    fit = y.mean() + slope * (x - xm)
    s2 = float(np.sum((y - fit) ** 2) / max(1, x.size - 2))
    pred = float(y.mean() + slope * (at - xm))
    return pred, float(np.sqrt(s2 * (1.0 / x.size + (at - xm) ** 2 / sxx)) + 1e-12)


def judge(x: FloatArray, y: FloatArray, bkps: list[int], sigma: float, window: int) -> list[Jump]:
    """Compare straight-line fits on each side of every breakpoint at the boundary."""
    out: list[Jump] = []
    edges = [0, *bkps]
    for i, t in enumerate(bkps[:-1]):
        lo = max(edges[i], t - window, 0)
        hi = min(bkps[i + 1], t + window)
        lo, hi = min(lo, max(0, t - 8)), max(hi, min(y.size, t + 8))
        at = 0.5 * (x[t - 1] + x[t])
        before, se_b = _side_fit(x[lo:t], y[lo:t], at)
        after, se_a = _side_fit(x[t:hi], y[t:hi], at)
        d = after - before
        out.append(
            Jump(
                t,
                before,
                after,
                d,
                d / float(np.hypot(se_b, se_a)),
                d / sigma if sigma > 0 else np.inf,
            )
        )
    return out


def lasting(jumps: list[Jump], others: list[Jump], n: int, min_len: int) -> list[Jump]:
    """Keep changes whose old and new regimes both last ``min_len`` rows.

    A regime ends at the run's ends or at a jump among ``others`` that undoes at least half of
    this one (opposite sign): a short up-and-back excursion is a spike or a dip, not a regime, and
    the first rows of a steep start are the start, not a change.
    """
    out = []
    for j in jumps:
        undo = [o.row for o in others if o.jump * j.jump < 0 and abs(o.jump) >= 0.5 * abs(j.jump)]
        before = max([r for r in undo if r < j.row], default=0)
        after = min([r for r in undo if r > j.row], default=n)
        if min(j.row - before, after - j.row) >= min_len:
            out.append(j)
    return out


class ChangepointDetector(Analyzer):
    """Regime changes of the loss and accuracy that stand out from the noise and the trend."""

    name = "changepoints"
    #: every keyword of ``__init__`` with its type and bounds (checked where configured)
    options: ClassVar[tuple[Option, ...]] = (
        positive("beta"), int_opt("max_blocks", 1), positive("min_t"), at_least("min_delta_sigma", 0),
        at_least("min_rel", 0), at_least("min_acc_delta", 0), fraction("window_frac"),
        int_opt("max_findings", 1), int_opt("min_regime_rows", 1), Option("min_regime_frac", float, 0, 1),
    )

    def __init__(
        self,
        *,
        beta: float = 3.0,
        max_blocks: int = 2000,
        min_t: float = 8.0,
        min_delta_sigma: float = 1.0,
        min_rel: float = 0.08,
        min_acc_delta: float = 0.03,
        window_frac: float = 0.02,
        max_findings: int = 10,
        min_regime_rows: int = 10,
        min_regime_frac: float = 0.005,
    ) -> None:
        self.min_regime_rows = min_regime_rows
        self.min_regime_frac = min_regime_frac
        self.beta = beta
        self.max_blocks = max_blocks
        self.min_t = min_t
        self.min_delta_sigma = min_delta_sigma
        self.min_rel = min_rel
        self.min_acc_delta = min_acc_delta
        self.window_frac = window_frac
        self.max_findings = max_findings

    def analyze(self, run: Run) -> Detection:
        """LD301 for the loss, LD302 for the accuracy; artifact ``changepoints`` (loss steps)."""
        loss = self._changes(robust.series(run, LOSS), "LD301")
        acc = self._changes(robust.series(run, ACC), "LD302")
        steps = tuple(int(f.first_step) for f in loss if f.first_step is not None)
        return Detection((*loss, *acc), {"changepoints": tuple(sorted(steps))})

    def _changes(self, s: Series, code: str) -> list[Finding]:
        if s.n < MIN_POINTS:
            return []
        y = s.transformed() if code == "LD301" else s.values
        sigma = robust.noise_sigma(y)
        if not 0 < sigma < np.inf:
            return []
        med = robust.rolling_median(y, 15)
        yw = np.clip(y, med - 5 * sigma, med + 5 * sigma)
        pen = self.beta * sigma**2 * np.log(s.n)
        with np.errstate(over="ignore", invalid="ignore"):
            # the L2 costs sum squares: values near the float limit (a loss of ±1e308) overflow them
            if not (np.isfinite(pen) and np.isfinite(np.square(yw).sum()) and np.isfinite(med).all()):
                return []
        bkps = fast_breakpoints(yw, pen, max_blocks=self.max_blocks)
        x = np.log(np.maximum(s.steps - s.steps[0], 0) + 1.0 + 0.01 * (s.steps[-1] - s.steps[0]))
        window = max(10, int(self.window_frac * s.n))
        jumps = judge(x, yw, bkps, sigma, window)
        big = [j for j in jumps if self._large(j, code, s.log_scale)]
        sig = [j for j in big if abs(j.t) >= self.min_t]
        kept = lasting(sig, big, s.n, self._min_regime(s.n))
        kept.sort(key=lambda j: -abs(j.t))
        return [self._finding(s, j, code, sigma) for j in kept[: self.max_findings]]

    def _min_regime(self, n: int) -> int:
        return max(self.min_regime_rows, int(self.min_regime_frac * n))

    def _large(self, j: Jump, code: str, log_scale: bool) -> bool:
        """Large against the noise and the level (the t-test is applied separately)."""
        if abs(j.delta_sigma) < self.min_delta_sigma:
            return False
        if code == "LD302":
            return abs(j.jump) >= self.min_acc_delta
        rel = np.expm1(j.jump) if log_scale else j.jump / max(abs(j.before), 1e-12)
        return bool(abs(rel) >= self.min_rel)

    def _finding(self, s: Series, j: Jump, code: str, sigma: float) -> Finding:
        log = code == "LD301" and s.log_scale
        before = float(np.exp(j.before)) if log else j.before
        after = float(np.exp(j.after)) if log else j.after
        rel = (after - before) / abs(before) if before else float("inf")
        step = int(s.steps[j.row])
        up = after > before
        sev = Severity.WARNING if code == "LD301" and up and rel >= 0.2 else None
        what = "loss" if code == "LD301" else "accuracy"
        ev = {
            "step": step,
            "level_before": round(before, 6),
            "level_after": round(after, 6),
            "relative_change": round(rel, 4),
            "delta_sigma": round(j.delta_sigma, 2),
            "t_stat": round(j.t, 2),
            "noise_sigma": round(sigma, 6),
            "scale": "log" if log else "linear",
        }
        kw: dict[str, object] = {"severity": sev} if sev else {}
        return codes.finding(
            code,
            f"The {what} level {'jumps up' if up else 'drops'} at step {step}: "
            f"{before:.4g} -> {after:.4g} "
            f"({100 * rel:+.1f}%, {abs(j.delta_sigma):.1f} noise sigmas, t={abs(j.t):.0f}).",
            confidence=float(min(0.99, 0.5 + 0.5 * (1 - self.min_t / max(abs(j.t), 1e-9)))),
            first_step=step,
            last_step=step,
            line=int(s.lines[j.row]) or None,
            evidence=ev,
            **kw,
        )
