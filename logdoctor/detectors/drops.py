"""Metric trends against noise and stage: acc drop (LD401), loss plateau (LD402), rise (LD403)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors import robust
from logdoctor.detectors.base import TOO_FEW_ROWS, Analyzer, Detection
from logdoctor.detectors.robust import FloatArray, Series
from logdoctor.model import ACC, LOSS, Finding, Run, Severity
from logdoctor.options import Option, at_least, fraction, int_opt, positive

#: How LD403 ends when the loss came back below its earlier best (the finding is then information).
RECOVERED = ", then fell below that level again: a transient rise in a run that finished lower."
#: Fewer rows than this: no trend analysis.
MIN_POINTS = 20


def smooth(s: Series, frac: float, y: FloatArray | None = None) -> tuple[FloatArray, float, int]:
    """Rolling median over ``frac`` of the run, the per-row noise, and the window in rows."""
    v = s.values if y is None else y
    w = max(5, int(frac * s.n)) | 1
    sm = robust.rolling_median(v, w, mode="mirror")  # edges from real data, not the first value
    # Quantised metrics (accuracy of a 4-sample batch) make MAD-based noise 0: floor it with the
    # mean absolute deviation around the smooth curve (x 1.2533 -> Gaussian sigma).
    sigma = max(robust.noise_sigma(v), 1.2533 * float(np.mean(np.abs(v - sm))))
    return sm, sigma, w


def stretches(mask: np.ndarray, min_len: int) -> list[tuple[int, int]]:
    """(first, last) rows of each run of True lasting at least ``min_len`` rows."""
    starts, ends = robust.runs_of(robust.sustained(mask, min_len))
    return [(int(a), int(b) - 1) for a, b in zip(starts, ends, strict=True)]


def _plateau_message(s: Series, k: int, head: float, tail: float, improvement: float, moved: float) -> str:
    """The plateau in words, each level with the rows it is the median of; a first fall above the
    head level (the loss fell fast in its first rows, then stalled) is stated, not hidden."""
    change = f"{100 * improvement:.1f}% lower" if improvement >= 0 else f"{-100 * improvement:.1f}% higher"
    levels = (
        f"median {head:.4g} over its first {k} rows (steps {s.steps[0]}-{s.steps[k - 1]}) -> median "
        f"{tail:.4g} over its last {k} rows (steps {s.steps[-k]}-{s.steps[-1]}), {change}, "
        f"across {s.steps[-1] - s.steps[0]} steps."
    )
    first = float(s.values[0])
    if first > head * (1 + moved):
        return f"After its first fall (from {first:.4g} at step {s.steps[0]}), the loss barely moved: {levels}"
    return f"The loss barely moved over the whole run: {levels}"


class DropDetector(Analyzer):
    """Sustained accuracy drops and loss rises beyond noise, and loss plateaus."""

    name = "drops"
    #: every keyword of ``__init__`` with its type and bounds (checked where configured)
    options: ClassVar[tuple[Option, ...]] = (
        fraction("smooth_frac"),
        fraction("min_frac"),
        int_opt("min_rows", 1),
        Option("min_acc_drop", float, 0, 1),
        at_least("min_rel_drop", 0),
        positive("noise_k"),
        at_least("min_rel_rise", 0),
        positive("max_rise_ratio"),
        at_least("min_improvement", 0),
        fraction("tail_frac"),
        at_least("tail_flat", 0),
        Option("min_stall_planned_frac", float, 0, 1),
        int_opt("max_findings", 1),
    )

    def __init__(
        self,
        *,
        smooth_frac: float = 0.02,
        min_frac: float = 0.02,
        min_rows: int = 5,
        min_acc_drop: float = 0.05,
        min_rel_drop: float = 0.1,
        noise_k: float = 4.0,
        min_rel_rise: float = 0.1,
        max_rise_ratio: float = 1.5,
        min_improvement: float = 0.05,
        tail_frac: float = 0.3,
        tail_flat: float = 0.02,
        min_stall_planned_frac: float = 0.02,
        max_findings: int = 5,
    ) -> None:
        self.smooth_frac = smooth_frac
        self.min_frac = min_frac
        self.min_rows = min_rows
        self.min_acc_drop = min_acc_drop
        self.min_rel_drop = min_rel_drop
        self.noise_k = noise_k
        self.min_rel_rise = min_rel_rise
        self.max_rise_ratio = max_rise_ratio
        #: "barely moved" below this whole-run improvement: healthy real runs improve as little as
        #: 8-10% (LoRA SFT, continued pretraining, a late resume: ../shared/reallogs), so 15% called them stalled
        self.min_improvement = min_improvement
        self.tail_frac = tail_frac
        self.tail_flat = tail_flat
        #: a stall shorter than this share of the planned run (``step N/T``) is too early to call
        self.min_stall_planned_frac = min_stall_planned_frac
        self.max_findings = max_findings

    def analyze(self, run: Run) -> Detection:
        """LD401 on the accuracy, LD402 and LD403 on the loss."""
        loss, acc = robust.series(run, LOSS), robust.series(run, ACC)
        out: list[Finding] = []
        if acc.n >= MIN_POINTS:
            out += self._acc_drops(acc)
        if loss.n >= MIN_POINTS:
            out += self._loss_rises(loss)
            out += self._plateau(loss, run.meta.total_steps)
        return Detection(tuple(out), skipped=TOO_FEW_ROWS if loss.n < MIN_POINTS else "")

    def _min_len(self, n: int, w: int) -> int:
        """A sustained change lasts at least two smoothing windows (independent medians)."""
        return max(self.min_rows, int(self.min_frac * n), 2 * w)

    def _k(self, n: int, w: int) -> float:
        """Noise multiple for a departure from the best level so far: ``noise_k`` plus the
        expected extreme of ~n/w independent window medians (sqrt(2 ln(n/w))), because the
        running best of a noisy curve is itself biased by that much."""
        return self.noise_k + float(np.sqrt(2.0 * np.log(max(2.0, n / w))))

    def _acc_drops(self, s: Series) -> list[Finding]:
        sm, sigma, w = smooth(s, self.smooth_frac)
        best = np.maximum.accumulate(sm)
        need = np.maximum(
            np.maximum(self.min_acc_drop, self.min_rel_drop * best),
            self._k(s.n, w) * robust.smooth_noise(sm, w, sigma),
        )
        out = []
        for a, b in stretches(best - sm >= need, self._min_len(s.n, w))[: self.max_findings]:
            low = a + int(np.argmin(sm[a : b + 1]))
            peak = int(np.flatnonzero(sm[: a + 1] == best[a])[0])
            drop = float(best[a] - sm[low])
            ev = {
                "step": int(s.steps[a]),
                "best_level": round(float(best[a]), 6),
                "best_step": int(s.steps[peak]),
                "low_level": round(float(sm[low]), 6),
                "low_step": int(s.steps[low]),
                "drop": round(drop, 6),
                "drop_sigmas": round(drop / robust.smooth_noise(sm, w, sigma), 2) if sigma > 0 else None,
                "rows": b - a + 1,
                "smoothing_rows": w,
                "stage": round(a / s.n, 3),
            }
            out.append(
                codes.finding(
                    "LD401",
                    f"Accuracy fell from {best[a]:.4g} (step {s.steps[peak]}) "
                    f"to {sm[low]:.4g} at step "
                    f"{s.steps[low]} and stayed lower for {b - a + 1} rows (smoothed over {w}).",
                    confidence=float(min(0.99, 0.5 + drop)),
                    first_step=int(s.steps[a]),
                    last_step=int(s.steps[b]),
                    line=int(s.lines[a]) or None,
                    evidence=ev,
                )
            )
        return out

    def _loss_rises(self, s: Series) -> list[Finding]:
        y = s.transformed()
        sm, sigma, w = smooth(s, self.smooth_frac, y)
        best = np.minimum.accumulate(sm)
        rise = sm - best
        lim = np.log1p(self.min_rel_rise) if s.log_scale else self.min_rel_rise * np.abs(best)
        need = np.maximum(lim, self._k(s.n, w) * robust.smooth_noise(sm, w, sigma))
        out = []
        for a, b in stretches(rise >= need, self._min_len(s.n, w)):
            top = a + int(np.argmax(rise[a : b + 1]))
            ref = int(np.flatnonzero(sm[: a + 1] == best[a])[0])  # the row whose level is the best
            ratio = float(np.exp(rise[top])) if s.log_scale else float(1 + rise[top] / max(abs(best[a]), 1e-12))
            if ratio >= self.max_rise_ratio:
                continue  # a divergence: reported as LD002
            lvl = np.exp if s.log_scale else (lambda v: v)
            # the loss came back below its earlier best before the run ended (the run finished lower):
            # a transient rise (a schedule, a curriculum, the last epoch's drift) is information
            recovered = b < s.n - 1 and float(sm[b + 1 :].min()) < float(best[a])
            ev = {
                "step": int(s.steps[a]),
                "best_level": round(float(lvl(best[a])), 6),
                "peak_level": round(float(lvl(sm[top])), 6),
                "best_step": int(s.steps[ref]),
                "peak_step": int(s.steps[top]),
                "rise_ratio": round(ratio, 4),
                "rows": b - a + 1,
                "smoothing_rows": w,
                "recovered": recovered,
            }
            out.append(
                codes.finding(
                    "LD403",
                    f"The loss rose {100 * (ratio - 1):.0f}% above its best level "
                    f"({ev['best_level']:.4g} at step {s.steps[ref]} -> "
                    f"{ev['peak_level']:.4g} at step {s.steps[top]}, medians of {w} rows) for {b - a + 1} rows"
                    + (RECOVERED if recovered else "."),
                    **({"severity": Severity.INFO} if recovered else {}),
                    confidence=float(min(0.95, 0.5 + (ratio - 1))),
                    first_step=int(s.steps[a]),
                    last_step=int(s.steps[b]),
                    line=int(s.lines[a]) or None,
                    evidence=ev,
                )
            )
        return out[: self.max_findings]

    def _plateau(self, s: Series, planned: int | None = None) -> list[Finding]:
        k = max(3, s.n // 10)
        head, tail = float(robust.median(s.values[:k])), float(robust.median(s.values[-k:]))
        if head <= 0:
            return []
        improvement = 1.0 - tail / head
        if -self.min_rel_rise < improvement < self.min_improvement:
            ev = {
                "head_level": round(head, 6),
                "tail_level": round(tail, 6),
                "improvement": round(improvement, 4),
                "rows": s.n,
                "scope": "run",
                "rows_per_level": k,
            }
            return [
                codes.finding(
                    "LD402",
                    _plateau_message(s, k, head, tail, improvement, self.min_improvement),
                    confidence=float(min(0.95, 0.5 + (self.min_improvement - improvement))),
                    first_step=int(s.steps[0]),
                    last_step=int(s.steps[-1]),
                    evidence=ev,
                )
            ]
        return self._tail_stall(s, planned)

    def _tail_stall(self, s: Series, planned: int | None) -> list[Finding]:
        a = int(s.n * (1 - self.tail_frac))
        seg, steps = s.values[a:], s.steps[a:]
        if seg.size < MIN_POINTS:
            return []
        if planned and steps[-1] - steps[0] < self.min_stall_planned_frac * planned:
            return []  # e.g. 120 flat steps at step 400 of 52,000: the loss is still settling
        rho, p = robust.spearman(steps.astype(np.float64), seg)
        q = max(3, seg.size // 5)
        change = float(robust.median(seg[-q:]) / robust.median(seg[:q]) - 1.0) if robust.median(seg[:q]) > 0 else 0.0
        if (rho < 0 and p < 0.05) or abs(change) >= self.tail_flat:
            return []
        ev = {
            "spearman_rho": round(rho, 4),
            "p_value": round(p, 6),
            "relative_change": round(change, 5),
            "rows": int(seg.size),
            "scope": "tail",
        }
        return [
            codes.finding(
                "LD402",
                f"The loss stopped decreasing over the last {steps[-1] - steps[0]} steps "
                f"(it changed by {100 * change:+.2f}% over them).",  # the trend test is evidence (-v, JSON)
                confidence=0.6,
                first_step=int(steps[0]),
                last_step=int(steps[-1]),
                evidence=ev,
            )
        ]
