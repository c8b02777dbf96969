"""Memorisation (LD411): the training loss keeps falling many-fold while an eval score stays flat or gets worse."""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from logdoctor import codes, vocab
from logdoctor.detectors.base import NO_EVAL, Analyzer, Detection
from logdoctor.detectors.evalseries import EvalSeries, eval_loss_column, eval_series, is_perplexity
from logdoctor.detectors.overfitting import OverfittingDetector, eval_noise, medians_text, segment_start, train_window
from logdoctor.model import ACC, EPOCH, LINE_NO, STEP, Finding, Run
from logdoctor.options import Option, at_least, fraction, int_opt, positive
from logdoctor.stats.distributions import student_t_two_sided

#: Columns never judged by name here: losses (the validation loss only by ``_judges_loss``), bookkeeping,
#: test/best/train columns.
_SKIP_RE = re.compile(r"(^|_)(loss|test|best|train|predict|runtime|per_second|count|num|time|epoch|ratio)(_|$)")


def direction(name: str) -> int:
    """+1 when higher is better, -1 when lower is better (:func:`logdoctor.vocab.direction`), 0 when
    the name does not say or the column is never judged here (:data:`_SKIP_RE`)."""
    low = name.lower()
    if _SKIP_RE.search(low):
        return 0
    way = vocab.direction(low)
    return 0 if way is None else (1 if way is vocab.Direction.UP else -1)


@dataclass(frozen=True, slots=True)
class Trend:
    """The eval score's least-squares trend over the evals from ``start`` on, in the better direction."""

    start: int
    slope: float
    t: float
    p_improving: float
    n: int


def trend(ev: EvalSeries, start: int, sign: int) -> Trend:
    """OLS slope of ``ev`` from index ``start`` on; ``t`` and the one-sided p of "it improves"."""
    x, y = ev.steps[start:], sign * ev.values[start:]
    n = int(x.size)
    xc = x - x.mean()
    sxx = float(np.sum(xc**2))
    slope = float(np.sum(xc * (y - y.mean())) / sxx) if sxx > 0 else 0.0
    resid = y - y.mean() - slope * xc
    se = math.sqrt(float(np.sum(resid**2)) / (n - 2) / sxx) if sxx > 0 and n > 2 else math.inf
    t = slope / se if se > 0 else (math.inf if slope > 0 else -math.inf if slope < 0 else 0.0)
    p2 = student_t_two_sided(t, n - 2) if math.isfinite(t) else 0.0
    return Trend(start, slope, t, p2 / 2 if t > 0 else 1 - p2 / 2, n)


class MemorizationDetector(Analyzer):
    """LD411: from some eval on, the score no longer improves beyond its noise while the training
    loss falls ``min_fold``-fold or more.

    The plateau starts at the earliest eval from which the score's least-squares slope is not
    significantly better than 0 (one-sided t-test at ``alpha``, at least ``min_evals`` evals). The
    training loss level at an eval is the median of the rows just before it (as LD410 reads it).
    ``min_fold`` = 5: over the flat-score stretches of the real public runs whose scores are healthy
    the training loss falls at most 1.8-fold (OpenNMT, Sockeye; docs/detectors.md lists all 21), so
    5 is 2.7x beyond that; the memorising T5 run falls 230-fold, Whisper's 9-fold.
    """

    name = "memorization"
    options: ClassVar[tuple[Option, ...]] = (
        int_opt("min_evals", 3),
        at_least("min_fold", 1.0),
        fraction("alpha", high_open=True),
        positive("noise_k"),
    )

    def __init__(self, *, min_evals: int = 4, min_fold: float = 5.0, alpha: float = 0.05, noise_k: float = 2.0) -> None:
        self.min_evals = min_evals
        self.noise_k = noise_k
        self.min_fold = min_fold
        self.alpha = alpha

    def analyze(self, run: Run) -> Detection:
        """One LD411 for the score whose flat stretch saw the largest training-loss fall (ties within
        1%: the flattest score), naming the other scores that agree."""
        if run.evals.height == 0:
            return Detection(skipped=NO_EVAL)
        hits: list[tuple[float, float, Finding]] = []  # (train fold, p of improving, finding)
        loss_col = eval_loss_column(run)
        for col in run.evals.columns:
            sign = direction(col) if col not in (STEP, LINE_NO, EPOCH) else 0
            series = eval_series(run, col)
            is_loss = not sign and col == loss_col and self._judges_loss(run, series)
            sign = -1 if is_loss else sign  # the validation loss, as a lower-is-better score
            found = self._check(run, series, sign, keep_best=is_loss) if sign else None
            hits += [found] if found else []
        if not hits:
            return Detection()
        top = max(h[0] for h in hits)
        _, _, best = max((h for h in hits if h[0] >= 0.99 * top), key=lambda h: h[1])
        others = ", ".join(str(h[2].evidence["metric"]) for h in hits if h[2] is not best)
        ev = dict(best.evidence) | {"scores_flat": len(hits), "other_scores_flat": others}
        return Detection((dataclasses.replace(best, evidence=ev),))

    def _judges_loss(self, run: Run, ev: EvalSeries) -> bool:
        """True when the validation loss ``ev`` is judged here as a lower-is-better score (a perplexity
        already is): it set its best ``min_evals`` - 1 or more evaluations before its end, did not rise
        beyond its noise after it (that rise is LD410's, or LD412's), and its last evaluation is past
        the first epoch where the steps per epoch are known (no example seen twice: nothing memorised).

        A loss still setting new bests near its end is still generalising, however little, and the
        checkpoint to keep is the last one (the healthy icefall yesno runs: the train loss falls 4-11-fold
        over a flat 0.011 val loss whose best is its last or last-but-two eval). What is left is the run
        whose val loss zigzags too much for LD410's rise (an epoch-per-row table swinging by a fifth
        from epoch to epoch) yet never beats its best while the training loss falls ``min_fold``-fold.
        Null: bench/eval_loss_flat_null.py, the healthy real and dev blind runs with a validation loss
        past its best: the training loss fell at most 2.95-fold over the val loss's flat stretch
        (SpeechBrain EEGNet; a Keras CNN 2.61), under ``min_fold`` = 5.
        """
        if ev.n < self.min_evals or ev.n - 1 - int(np.argmin(ev.values)) < self.min_evals - 1:
            return False
        spe = run.meta.steps_per_epoch
        if spe and float(ev.steps[-1]) <= spe:
            return False
        return not OverfittingDetector().rose(ev)

    def plateau(self, ev: EvalSeries, sign: int) -> Trend | None:
        """The trend from the earliest eval on which the score stops improving significantly."""
        noise = eval_noise(ev.values)
        for start in range(0, ev.n - self.min_evals + 1):
            tr = trend(ev, start, sign)
            if tr.p_improving < self.alpha:
                continue
            # the stretch starts at its first eval within noise of its level (not at a last bad point)
            for first in range(start, ev.n - self.min_evals + 1):
                level = float(np.median(ev.values[first:]))
                if sign * (level - ev.values[first]) <= self.noise_k * noise:
                    return trend(ev, first, sign)
            return None
        return None

    def _check(
        self, run: Run, ev: EvalSeries, sign: int, *, keep_best: bool = False
    ) -> tuple[float, float, Finding] | None:
        """LD411 on one eval series; ``keep_best``: the hint names the series' best eval (a loss past its
        best), not the plateau's start."""
        if ev.n < self.min_evals:
            return None
        tr = self.plateau(ev, sign)
        if tr is None:
            return None
        s0, s1 = float(ev.steps[tr.start]), float(ev.steps[-1])
        (before, n0), (after, n1) = train_window(run, s0), train_window(run, s1)
        if not (np.isfinite(before) and np.isfinite(after) and before > 0 and after > 0):
            return None
        fold = before / after
        if fold < self.min_fold:
            return self._from_accuracy(run, ev, tr)
        if held_out_fold(run, s0, s1) >= math.sqrt(fold):
            return None  # the held-out loss fell with it: the fall generalises, the score is what is off
        if _train_accuracy_flat(run, ev, s0, s1):
            return None  # the training accuracy did not rise either: nothing is memorised (LD413's)
        keep = int(ev.steps[int(np.argmin(ev.values))]) if keep_best else None
        return fold, tr.p_improving, _finding(ev, sign, tr, (before, after), (n0, n1), keep)

    def _from_accuracy(self, run: Run, ev: EvalSeries, tr: Trend) -> tuple[float, float, Finding] | None:
        """The same rule on accuracy: the eval accuracy is flat while the model gets ``min_fold`` times
        fewer training examples wrong than held-out ones (healthy real runs: 0.7-1.2x; the memorising
        OpenNMT run 14x, 98.6 vs 80.2)."""
        words = set(ev.name.lower().split("_"))
        acc = run.table[ACC].to_numpy().astype(float) if run.has(ACC) else None
        if acc is None or not words & {"acc", "accuracy"}:
            return None
        steps = run.table[STEP].to_numpy()
        upto = acc[: int(np.searchsorted(steps, ev.steps[-1], side="right"))]
        upto = upto[np.isfinite(upto)]
        if upto.size < 3:
            return None
        scale = 100.0 if max(float(upto.max()), float(ev.values.max())) > 1.5 else 1.0
        train = float(np.median(upto[-max(3, upto.size // 20) :])) / scale
        held = float(ev.values[-1]) / scale
        ratio = (1 - held) / max(1 - train, 1e-4)  # errors: held-out over training (floored at 0.01%)
        if not (0 < held < 1 and ratio >= self.min_fold):
            return None
        return ratio, tr.p_improving, _acc_finding(ev, tr, train * scale, ratio)


def _train_accuracy_flat(run: Run, ev: EvalSeries, s0: float, s1: float) -> bool:
    """True when ``ev`` is an accuracy and the training accuracy the log prints beside the loss did not
    rise over the same stretch (its level at ``s1`` no higher than at ``s0``): a model that memorises
    its training data gets its training examples right, so a loss that falls while the training
    accuracy stays put (PaddleOCR's CTC loss falling 8-fold at accuracy 0 in training and evaluation)
    is no memorisation."""
    if not run.has(ACC) or not set(ev.name.lower().split("_")) & {"acc", "accuracy"}:
        return False
    steps = run.table[STEP].to_numpy().astype(float)
    acc = run.table[ACC].cast(float, strict=False).to_numpy().astype(float)

    def level(step: float) -> float:
        upto = acc[: int(np.searchsorted(steps, step, side="right"))]
        upto = upto[np.isfinite(upto)]
        return float(np.median(upto[-max(3, upto.size // 20) :])) if upto.size else float("nan")

    a0, a1 = level(s0), level(s1)
    return bool(np.isfinite(a0) and np.isfinite(a1) and a1 <= a0)


def held_out_fold(run: Run, s0: float, s1: float) -> float:
    """How many-fold the validation loss fell between ``s0`` and ``s1``, each level the median of the
    evals inside the window of training rows ``train_level`` reads there (0 without a validation
    loss; a perplexity is no loss here: its fold is exp of the loss's fall).

    Memorisation is a training loss falling while the held-out loss does not: where the held-out
    loss fell at least half as far in log terms (fold >= sqrt of the training fold), the eval score
    that stayed flat is what to doubt (issue 29's public Keras logs: a custom F1 above 1.0 with
    val_loss falling 8.6-fold; a U-Net whose precision sits at the background share while val_loss
    falls with the train loss). The real runs LD411 is right on are untouched: Whisper's eval_loss
    rose (0.36 -> 0.42), T5 and OpenNMT log no eval loss (BLEU, accuracy, perplexity).
    """
    col = eval_loss_column(run)
    if col is None or is_perplexity(col):
        return 0.0
    ev = eval_series(run, col)
    first, last = _eval_level(run, ev, s0), _eval_level(run, ev, s1)
    return first / last if first > 0 and last > 0 else 0.0


def _eval_level(run: Run, ev: EvalSeries, step: float) -> float:
    """Median of the evals from the first training row ``train_level(run, step)`` reads to ``step``
    (the eval nearest ``step`` when none falls inside); nan without evals."""
    if ev.n == 0:
        return float("nan")
    steps = run.table[STEP].to_numpy().astype(float)
    upto = int(np.searchsorted(steps, step, side="right"))
    lo = max(upto - max(3, int(0.05 * steps.size)), int(np.searchsorted(steps, segment_start(run, step))))
    inside = ev.values[(ev.steps >= steps[min(lo, steps.size - 1)]) & (ev.steps <= step)]
    return float(np.median(inside)) if inside.size else float(ev.values[int(np.argmin(np.abs(ev.steps - step)))])


def _finding(
    ev: EvalSeries, sign: int, tr: Trend, levels: tuple[float, float], rows: tuple[int, int], keep: int | None = None
) -> Finding:
    before, after = levels
    s0, s1 = int(ev.steps[tr.start]), int(ev.steps[-1])
    near = f"near step {s0:,}" if keep is None else f"at step {keep:,} (best {ev.name})"
    v0, v1 = float(ev.values[tr.start]), float(ev.values[-1])
    worse = tr.t < 0 and tr.p_improving > 0.975  # significantly worse (two-sided 5%)
    how = "got worse" if worse else "stayed within its noise"
    fold = before / after
    label = ev.name if vocab.is_eval(ev.name) else f"eval {ev.name}"
    msg = (
        f"The training loss fell {fold:,.0f}-fold since step {s0:,} ({before:.4g} -> {after:.4g}, "
        f"{medians_text(rows)}) while "
        f"{label} {how} over {tr.n} evals ({v0:.4g} -> {v1:.4g}; no significant improvement): "
        "the model memorises the training data."  # the trend test's p-value is evidence (-v, JSON)
    )
    return codes.finding(
        "LD411",
        msg,
        first_step=s0,
        last_step=s1,
        hint=f"Keep the checkpoint {near}; more training only fits the training set "
        "(more data, augmentation, regularisation, or stop there).",
        evidence={
            "metric": ev.name,
            "higher_is_better": sign > 0,
            "plateau_step": s0,
            "train_loss_at_plateau": before,
            "train_loss_at_end": after,
            "train_fold": fold,
            "eval_first": v0,
            "eval_last": v1,
            "slope_per_1k_steps": sign * tr.slope * 1000.0,
            "t": tr.t,
            "p_improving": tr.p_improving,
            "evals_in_plateau": tr.n,
            "got_worse": worse,
        },
        confidence=0.7,
    )


def _acc_finding(ev: EvalSeries, tr: Trend, train_acc: float, ratio: float) -> Finding:
    s0, s1 = int(ev.steps[tr.start]), int(ev.steps[-1])
    v0, v1 = float(ev.values[tr.start]), float(ev.values[-1])
    label = ev.name if vocab.is_eval(ev.name) else f"eval {ev.name}"
    times = f"{ratio:,.0f}x" if ratio < 1e4 else "more than 10,000x"
    msg = (
        f"The training accuracy reached {train_acc:.4g} while {label} stayed within its noise from step "
        f"{s0:,} over {tr.n} evals ({v0:.4g} -> {v1:.4g}; no significant improvement): "
        f"{times} fewer errors on the training data than on held-out data, the "
        "model memorises the training data."
    )
    return codes.finding(
        "LD411",
        msg,
        first_step=s0,
        last_step=s1,
        hint=f"Keep the checkpoint near step {s0:,}; more training only fits the training set "
        "(more data, augmentation, regularisation, or stop there).",
        evidence={
            "metric": ev.name,
            "basis": "accuracy",
            "plateau_step": s0,
            "train_acc_at_end": train_acc,
            "eval_first": v0,
            "eval_last": v1,
            "error_ratio": round(ratio, 2),
            "t": tr.t,
            "p_improving": tr.p_improving,
            "evals_in_plateau": tr.n,
        },
        confidence=0.7,
    )
