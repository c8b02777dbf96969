"""Abrupt level changes of the loss (LD301) and accuracy (LD302), in O(n) on a million steps.

Search: the series is aggregated into at most ``max_blocks`` block means, the exact penalised L2
segmentation runs there (ruptures KernelCPD with the linear kernel, i.e. PELT with the L2 cost, in
C), and each breakpoint is refined at full resolution to the best single split between its
neighbours inside a two-block window (an O(window) scan with cumulative sums).

Judgement: a smoothly falling loss is cut by the search into a staircase, so each candidate is
tested as a *discontinuity*: a straight line is fitted on each side in log(step) (loss curves are
close to power laws) and the two lines are compared at the boundary. Only jumps that are large
against the extrapolation error (t), the per-step noise (delta_sigma) and the level (relative
change) are reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import ruptures as rpt

from logdoctor import codes
from logdoctor.analyzers import robust
from logdoctor.analyzers.base import Analyzer, Detection
from logdoctor.analyzers.robust import FloatArray, Series
from logdoctor.model import ACC, LOSS, Finding, Run, Severity

#: Fewer rows than this: no changepoint analysis (reported once by the too-short analyzer).
MIN_POINTS = 30


def _sse(c1: FloatArray, c2: FloatArray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sum of squared deviations from the mean of y[a:b] from cumulative sums (vectorised)."""
    n = (b - a).astype(np.float64)
    s = c1[b] - c1[a]
    return (c2[b] - c2[a]) - np.where(n > 0, s * s / np.maximum(n, 1), 0.0)


def fast_breakpoints(
    y: FloatArray, pen: float, *, max_blocks: int = 2000, min_size: int = 2
) -> list[int]:
    """Penalised L2 changepoints of ``y`` (ruptures convention: segment ends, last = len(y)).

    Exact (same as ``rpt.Pelt(model="l2").fit(y).predict(pen)``) when ``len(y) <= max_blocks``;
    otherwise a block-level exact search refined locally at full resolution.
    """
    n = y.size
    if n < 2 * min_size:
        return [n]
    blocks, b = robust.block_reduce(y, max_blocks, how="mean")
    if blocks.size < 4:
        return [n]
    algo = rpt.KernelCPD(
        kernel="linear", min_size=max(1, min_size // b) if b > 1 else min_size, jump=1
    )
    coarse = [min(n, int(k) * b) for k in algo.fit(blocks.reshape(-1, 1)).predict(pen=pen / b)[:-1]]
    if b == 1 or not coarse:
        return [*coarse, n]
    c1 = np.concatenate(([0.0], np.cumsum(y)))
    c2 = np.concatenate(([0.0], np.cumsum(y * y)))
    refined = _refine(c1, c2, coarse, n, b, min_size)
    refined = _merge_close(c1, c2, _prune(c1, c2, refined, n, pen), n, b, pen)
    for _ in range(5):  # each pass moves a breakpoint at most one block: repeat until stable
        moved = _refine(c1, c2, refined, n, b, min_size)
        if moved == refined:
            break
        refined = moved
    return [*refined, n]


def _refine(
    c1: FloatArray, c2: FloatArray, bkps: list[int], n: int, b: int, min_size: int
) -> list[int]:
    """Move each breakpoint to the best split between its neighbours within +-2b rows."""
    out: list[int] = []
    for i, t in enumerate(bkps):
        prev = out[-1] if out else 0
        nxt = bkps[i + 1] if i + 1 < len(bkps) else n
        lo, hi = max(prev + min_size, t - 2 * b), min(nxt - min_size, t + 2 * b)
        if hi < lo:
            out.append(t)
            continue
        cand = np.arange(lo, hi + 1)
        cost = _sse(c1, c2, np.full_like(cand, prev), cand) + _sse(
            c1, c2, cand, np.full_like(cand, nxt)
        )
        out.append(int(cand[np.argmin(cost)]))
    return out


def _merge_close(
    c1: FloatArray, c2: FloatArray, bkps: list[int], n: int, b: int, pen: float
) -> list[int]:
    """Replace two breakpoints less than a block apart by the best single split between their
    neighbours when that lowers the penalised cost (one change straddling a block edge)."""
    out = list(bkps)
    i = 0
    while i + 1 < len(out):
        if out[i + 1] - out[i] > b:
            i += 1
            continue
        prev = out[i - 1] if i else 0
        nxt = out[i + 2] if i + 2 < len(out) else n
        a, z = np.array([prev]), np.array([nxt])
        t1, t2 = np.array([out[i]]), np.array([out[i + 1]])
        keep = float((_sse(c1, c2, a, t1) + _sse(c1, c2, t1, t2) + _sse(c1, c2, t2, z))[0]) + pen
        cand = np.arange(out[i] - b, out[i + 1] + b + 1)
        cand = cand[(cand > prev + 1) & (cand < nxt - 1)]
        if cand.size:
            cost = _sse(c1, c2, np.full_like(cand, prev), cand) + _sse(
                c1, c2, cand, np.full_like(cand, nxt)
            )
            j = int(np.argmin(cost))
            if float(cost[j]) < keep:
                out[i : i + 2] = [int(cand[j])]
                continue
        i += 1
    return out


def _prune(c1: FloatArray, c2: FloatArray, bkps: list[int], n: int, pen: float) -> list[int]:
    """Drop, weakest first, breakpoints whose removal raises the L2 cost by less than ``pen``
    (block aggregation can put two breakpoints around one change that falls inside a block)."""
    cur = np.asarray(bkps, dtype=np.int64)
    while cur.size:
        e = np.concatenate(([0], cur, [n]))
        a, t, z = e[:-2], e[1:-1], e[2:]
        gain = _sse(c1, c2, a, z) - _sse(c1, c2, a, t) - _sse(c1, c2, t, z)
        i = int(np.argmin(gain))
        if gain[i] >= pen:
            break
        cur = np.delete(cur, i)
    return [int(v) for v in cur]


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

    def __init__(
        self,
        *,
        beta: float = 3.0,
        max_blocks: int = 2000,
        min_t: float = 8.0,
        min_delta_sigma: float = 1.0,
        min_rel: float = 0.05,
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
        if sigma <= 0:
            return []
        med = robust.rolling_median(y, 15)
        yw = np.clip(y, med - 5 * sigma, med + 5 * sigma)
        bkps = fast_breakpoints(yw, self.beta * sigma**2 * np.log(s.n), max_blocks=self.max_blocks)
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
