"""Abrupt level changes of the loss (LD301) and accuracy (LD302), in O(n) on a million steps.

Search: ``cpsearch.fast_breakpoints`` (exact penalised L2 on block means, refined locally).

Judgement: a smoothly falling loss is cut by the search into a staircase, so each candidate is
tested as a *discontinuity*: a straight line is fitted on each side in log(step) (loss curves are
close to power laws) and the two lines are compared at the boundary. Only jumps that are large
against the extrapolation error (t), the per-step noise (delta_sigma) and the level (relative
change) are reported.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors import robust
from logdoctor.detectors.base import TOO_FEW_ROWS, Analyzer, Detection
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
    #: last breakpoint of a ramp judged as one change (== row for a single breakpoint), and the
    #: rows the two sides were fitted on: [lo, row) before, [row_end, hi) after
    row_end: int = -1
    lo: int = 0
    hi: int = 0


def ramps(y: FloatArray, bkps: list[int], max_gap: int, min_step: float = 0.0) -> list[tuple[int, int]]:
    """Breakpoints grouped into changes: consecutive breakpoints less than ``max_gap`` rows apart
    (a stretch shorter than the shortest regime is no regime of its own) whose segment means move
    the same way (a level climbing 6 -> 9 -> 17 over a few blocks) are one change from the first
    to the last, not a staircase of small ones. A breakpoint whose own step is under ``min_step``
    (the noise) or under a tenth of its group's whole change does not widen the group: the change
    is placed where the level moves. (first, last) each."""
    edges = [0, *bkps]
    means = [float(np.mean(y[a:b])) for a, b in itertools.pairwise(edges)]
    step = {t: means[i + 1] - means[i] for i, t in enumerate(bkps[:-1])}
    groups: list[list[int]] = []
    for t in bkps[:-1]:
        last = groups[-1][-1] if groups else None
        # a ramp longer than the shortest regime is a trend (a smooth fall cut into a staircase), not a jump
        joins = last is not None and t - groups[-1][0] <= max_gap and t - last < max_gap
        if joins and last is not None and step[t] * step[last] > 0 and abs(step[t]) >= min_step:
            groups[-1].append(t)
        else:
            groups.append([t])
    out: list[tuple[int, int]] = []
    for g in groups:
        total = abs(sum(step[t] for t in g))
        big = [t for t in g if abs(step[t]) >= max(min_step, 0.1 * total)] or g
        out += [(t, t) for t in g if t < big[0]]
        out.append((big[0], big[-1]))
        out += [(t, t) for t in g if t > big[-1]]
    return out


def _side_fit(x: FloatArray, y: FloatArray, at: float) -> tuple[float, float]:
    """Least-squares line through (x, y) evaluated at ``at``, with the standard error there."""
    # array methods rather than np.mean/np.sum/np.ptp: the same reductions without numpy's
    # dispatch, which costs more than the sums on sides of a few dozen rows (~900 fits per log)
    if x.size < 3 or x.max() - x.min() == 0:
        m = float(y.mean())
        return m, float(y.std() / np.sqrt(max(1, y.size)) + 1e-12)
    xm, ym = x.mean(), y.mean()
    dx = x - xm  # each value once: the same numbers as before, at half the numpy calls
    sxx = float((dx**2).sum())
    slope = float((dx * (y - ym)).sum() / sxx)
    fit = ym + slope * dx
    s2 = float(((y - fit) ** 2).sum() / max(1, x.size - 2))
    pred = float(ym + slope * (at - xm))
    return pred, float(np.sqrt(s2 * (1.0 / x.size + (at - xm) ** 2 / sxx)) + 1e-12)


def judge(x: FloatArray, y: FloatArray, bkps: list[int], sigma: float, window: int, max_gap: int = 0) -> list[Jump]:
    """Compare straight-line fits on each side of every change at its boundary; a ramp of
    breakpoints (``ramps``, closer than ``max_gap`` rows) is one change, its sides fitted before
    its first and after its last breakpoint."""
    out: list[Jump] = []
    groups = ramps(y, bkps, max_gap, sigma) if max_gap > 0 else [(t, t) for t in bkps[:-1]]
    if not groups:
        return out
    starts = [0] + [g[1] for g in groups[:-1]]
    ends = [g[0] for g in groups[1:]] + [bkps[-1]]
    for (t, u), prev, nxt in zip(groups, starts, ends, strict=True):
        lo = max(prev, t - window, 0)
        hi = min(nxt, u + window)
        lo, hi = min(lo, max(0, t - 8)), max(hi, min(y.size, u + 8))
        if u > t:  # a ramp starts where the level leaves the one before it, not at a row still on it
            base = float(robust.median(y[lo:t]))
            while t < u and abs(y[t] - base) < 3 * sigma:
                t += 1
        at = 0.5 * (x[t - 1] + x[u])
        before, se_b = _side_fit(x[lo:t], y[lo:t], at)
        after, se_a = _side_fit(x[u:hi], y[u:hi], at)
        d = after - before
        out.append(
            Jump(
                t,
                before,
                after,
                d,
                d / float(np.hypot(se_b, se_a)),
                d / sigma if sigma > 0 else np.inf,
                u,
                lo,
                hi,
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
        positive("beta"),
        int_opt("max_blocks", 1),
        positive("min_t"),
        at_least("min_delta_sigma", 0),
        at_least("min_rel", 0),
        at_least("min_acc_delta", 0),
        fraction("window_frac"),
        int_opt("max_findings", 1),
        int_opt("min_regime_rows", 1),
        Option("min_regime_frac", float, 0, 1),
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
        series = robust.series(run, LOSS)
        loss = self._changes(series, "LD301")
        acc = self._changes(robust.series(run, ACC), "LD302")
        steps = tuple(int(f.first_step) for f in loss if f.first_step is not None)
        return Detection(
            (*loss, *acc), {"changepoints": tuple(sorted(steps))}, skipped=TOO_FEW_ROWS if series.n < MIN_POINTS else ""
        )

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
        jumps = judge(x, yw, bkps, sigma, window, max_gap=self._min_regime(s.n))
        big = [j for j in jumps if self._large(j, code, s.log_scale) and self._holds(j, yw, window, code, s.log_scale)]
        sig = [j for j in big if abs(j.t) >= self.min_t]
        kept = lasting(sig, big, s.n, self._min_regime(s.n))
        kept.sort(key=lambda j: -abs(j.t))
        return [self._finding(s, j, code, sigma) for j in kept[: self.max_findings]]

    def _holds(self, j: Jump, y: FloatArray, window: int, code: str, log_scale: bool) -> bool:
        """The level differs the same way over ``window`` rows on each side (blind to other
        breakpoints): a dip or bump shorter than that inside a plateau is no change of level."""
        before = float(robust.median(y[max(0, j.row - window) : j.row]))
        after = float(robust.median(y[j.row_end : j.row_end + window]))
        wide = Jump(j.row, before, after, after - before, j.t, j.delta_sigma)
        return (
            wide.jump * j.jump > 0 and self._large(wide, code, log_scale)
            if code == "LD301"
            else (wide.jump * j.jump > 0 and abs(wide.jump) >= self.min_acc_delta)
        )

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
        # the levels stated are the log's: medians of the rows each side was judged on
        before = float(robust.median(s.values[j.lo : j.row]))
        after = float(robust.median(s.values[j.row_end : j.hi]))
        rel = (after - before) / abs(before) if before else float("inf")
        step, end = int(s.steps[j.row]), int(s.steps[j.row_end])
        up = j.jump > 0
        sev = Severity.WARNING if code == "LD301" and up and rel >= 0.2 else None
        what = "loss" if code == "LD301" else "accuracy"
        where = f"at step {step}" if end == step else f"between step {step} and {end}"
        ev = {
            "step": step,
            "step_end": end,
            "rows_before": j.row - j.lo,
            "rows_after": j.hi - j.row_end,
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
            f"The {what} level {'jumps up' if up else 'drops'} {where}: median {before:.4g} over steps "
            f"{int(s.steps[j.lo])}-{int(s.steps[j.row - 1])} -> median {after:.4g} over steps {end}-"
            f"{int(s.steps[j.hi - 1])} ({100 * rel:+.1f}%, {abs(j.delta_sigma):.1f}x its step-to-step noise).",
            confidence=float(min(0.99, 0.5 + 0.5 * (1 - self.min_t / max(abs(j.t), 1e-9)))),
            first_step=step,
            last_step=end,
            line=int(s.lines[j.row]) or None,
            evidence=ev,
            **kw,
        )
