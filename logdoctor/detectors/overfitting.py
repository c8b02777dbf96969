"""Overfitting (LD410): the eval loss passed its best and rose while the training loss kept falling.

The same rise while the training loss stayed flat (within ``min_train_drop`` either way) or rose
too is no overfitting but an eval loss that rose over a sustained stretch: LD412 (a run that stopped
learning, or diverged, and got worse on held-out data; a rising training loss has its own findings
besides). So is a rise whose last evaluation is still inside the first epoch (steps per epoch known):
no training example was seen twice, so the model cannot have fitted the training set at the held-out
set's expense (issue 41 item 3).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors.base import NO_EVAL, TOO_FEW_EVALS, Analyzer, Detection
from logdoctor.detectors.evalseries import EvalSeries, main_eval_loss
from logdoctor.model import LOSS, STEP, Finding, Run
from logdoctor.options import Option, int_opt, positive


def eval_noise(values: np.ndarray) -> float:
    """Robust per-point noise of an eval series: MAD of its successive differences / sqrt(2)."""
    if values.size < 3:
        return 0.0
    d = np.diff(values)
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / np.sqrt(2.0))


class OverfittingDetector(Analyzer):
    """The eval loss's best point, then a sustained rise beyond its noise while the train loss falls.

    A rise counts when the median of the later half of the evals after the best exceeds the best
    level (median of the best eval and its neighbours) by ``min_rel_rise`` of its value AND by
    ``noise_k`` times the eval noise, and the last eval is above it by as much;
    the training loss must be lower at the end than at the best step (by ``min_train_drop``), and the
    last eval past the first epoch (when the steps per epoch are known), else the rise is LD412.
    """

    name = "overfitting"
    options: ClassVar[tuple[Option, ...]] = (
        int_opt("min_evals", 3),
        int_opt("min_after", 1),
        Option("min_rel_rise", float, 0, None),
        positive("noise_k"),
        Option("min_train_drop", float, 0, None),
    )

    def __init__(
        self,
        *,
        min_evals: int = 4,
        min_after: int = 2,
        min_rel_rise: float = 0.01,
        noise_k: float = 4.0,
        min_train_drop: float = 0.02,
    ) -> None:
        self.min_evals = min_evals
        self.min_after = min_after
        self.min_rel_rise = min_rel_rise
        self.noise_k = noise_k
        self.min_train_drop = min_train_drop

    def analyze(self, run: Run) -> Detection:
        """LD410 when the main eval loss overfits; nothing without eval series."""
        ev = main_eval_loss(run)
        if ev is None or ev.n < self.min_evals:
            return Detection(skipped=NO_EVAL if ev is None else TOO_FEW_EVALS)
        found = self._check(run, ev) or self._before_restore(run, ev)
        return Detection((found,) if found else ())

    def _before_restore(self, run: Run, ev: EvalSeries) -> Finding | None:
        """The rule on the evals up to each mid-run reload of the best checkpoint (the lexicon's
        ``best_restored``: Sockeye reloads it when it cuts the lr after evaluations that did not
        improve). The evals after a reload continue from the best model, so a rise before it is no
        longer the series' end; the first stretch that shows one is the finding. On the real Sockeye
        runs whose truth is healthy (dev blind sockeye3_signwriting_expanded_early_stop, 2 reloads;
        ../shared/reallogs sockeye3_signwriting_train_original, 5) no stretch before a reload rises."""
        st = run.meta.structure
        restores = [e for e in (st.events if st is not None else ()) if e.kind == "best_restored" and e.step]
        for e in restores:
            keep = ev.steps <= float(e.step or 0)
            if int(keep.sum()) < self.min_evals or keep.all():
                continue
            found = self._check(run, EvalSeries(ev.name, ev.steps[keep], ev.values[keep]))
            if found is not None:
                said = f" Then the trainer reloaded its best checkpoint (line {e.line})."
                return dataclasses.replace(
                    found, message=found.message + said, evidence={**found.evidence, "restored_line": e.line}
                )
        return None

    def rose(self, ev: EvalSeries) -> bool:
        """True when ``ev`` passed its best and rose beyond its noise (the rise LD410 and LD412 judge)."""
        best = int(np.argmin(ev.values))
        after = ev.values[best + 1 :]
        if after.size < self.min_after:
            return False
        # the best level is the median around the minimum: the minimum of noisy evals is biased low, and
        # a lone low eval between two higher ones is no level. A best at the first eval has one neighbour:
        # the median of two is their mean, half-way up a jump that follows; there the level is the best
        # plus its noise (at most that mean); a first eval is the least trained one, rarely a lucky low.
        noise = eval_noise(ev.values)
        b = float(np.median(ev.values[max(0, best - 1) : best + 2]))
        if best == 0:
            b = min(b, float(ev.values[0]) + noise)
        rise = float(np.median(after[after.size // 2 :])) - b
        last_rise = float(after[-1]) - b
        need = max(self.min_rel_rise * abs(b), self.noise_k * noise)
        return rise >= need and last_rise >= need

    def _check(self, run: Run, ev: EvalSeries) -> Finding | None:
        if not self.rose(ev):
            return None
        best = int(np.argmin(ev.values))
        noise = eval_noise(ev.values)
        best_step, last_step = float(ev.steps[best]), float(ev.steps[-1])
        (train_best, n_best), (train_end, n_end) = train_window(run, best_step), train_window(run, last_step)
        if not (np.isfinite(train_best) and np.isfinite(train_end)):
            return None
        drop = (train_best - train_end) / abs(train_best) if train_best else 0.0
        train = (train_best, train_end)
        rows = (n_best, n_end)
        if drop <= -self.min_train_drop:  # the training loss rose too: held-out got worse with it
            return _eval_rise(ev, best, noise, train, "rose too", rows, hint=_ROSE_TOO)
        if drop < self.min_train_drop:  # flat training loss: no overfitting, but held-out got worse
            return _eval_rise(ev, best, noise, train, f"stayed within {self.min_train_drop:.0%}", rows)
        spe = run.meta.steps_per_epoch
        if spe and last_step <= spe:  # no training example seen twice yet: no overfitting
            return _eval_rise(ev, best, noise, train, "kept falling, all inside the first epoch", rows, hint=_EPOCH_ONE)
        return _finding(ev, best, noise, train_best, train_end, (n_best, n_end))


def segment_start(run: Run, step: float) -> float:
    """The first step of the stretch of the run that holds ``step``: the last resume at or before
    it (a level measured across a resume mixes two runs' levels), else the run's first step."""
    inside = [s for s in run.meta.resume_steps if s <= step]
    return float(max(inside)) if inside else float("-inf")


def train_level(run: Run, step: float, frac: float = 0.05) -> float:
    """Median training loss over the rows up to ``step`` (the last ``frac`` of the run's rows, >= 3),
    never reaching back past a resume (``segment_start``): fewer rows then."""
    return train_window(run, step, frac)[0]


def train_window(run: Run, step: float, frac: float = 0.05) -> tuple[float, int]:
    """``train_level`` and the number of rows it is the median of."""
    steps = run.table[STEP].to_numpy().astype(float)
    loss = run.table[LOSS].to_numpy().astype(float)
    upto = int(np.searchsorted(steps, step, side="right"))
    if upto == 0:
        return float("nan"), 0
    w = max(3, int(frac * steps.size))
    lo = max(upto - w, int(np.searchsorted(steps, segment_start(run, step), side="left")))
    window = loss[lo:upto]
    window = window[np.isfinite(window)]
    return (float(np.median(window)), int(window.size)) if window.size else (float("nan"), 0)


def _rise_evidence(ev: EvalSeries, best: int, noise: float, tb: float, te: float) -> dict[str, float | int | str]:
    b, last = float(ev.values[best]), float(ev.values[-1])
    return {
        "metric": ev.name,
        "best_step": int(ev.steps[best]),
        "best_value": b,
        "last_value": last,
        "rise": last - b,
        "rise_rel": (last - b) / abs(b) if b else float("inf"),
        "eval_noise": noise,
        "evals": ev.n,
        "evals_after_best": ev.n - best - 1,
        "train_loss_at_best": tb,
        "train_loss_at_end": te,
    }


def medians_text(rows: tuple[int, int]) -> str:
    """How the two training levels were smoothed: ``medians of the 61 and 123 rows up to each``."""
    a, b = rows
    if a == b:
        return f"median of the {a} row{'s' if a != 1 else ''} up to each"
    return f"medians of the {a} and {b} rows up to each"


#: LD412's hints: the training loss stayed flat, rose with the eval loss, or fell inside the first epoch.
_FLAT = "The run stopped learning: check the lr, data and labels; the best checkpoint is at step {step:,}."
_ROSE_TOO = (
    "The training loss rose with it (see its own findings): lower the lr or add warm-up / clipping; the best "
    "checkpoint is at step {step:,}."
)
_EPOCH_ONE = (
    "No training example was seen twice, so this is no overfitting: compare the eval data and its "
    "preprocessing with the training data, and the lr; the best checkpoint is at step {step:,}."
)


def _eval_rise(
    ev: EvalSeries,
    best: int,
    noise: float,
    train: tuple[float, float],
    how: str,
    rows: tuple[int, int],
    *,
    hint: str = _FLAT,
) -> Finding:
    """LD412: the eval loss rose beyond its noise while the training loss stayed flat, rose too, or fell
    inside the first epoch (no training example seen twice: no overfitting); ``how`` says which."""
    tb, te = train
    evidence = _rise_evidence(ev, best, noise, tb, te)
    bs, ls = int(ev.steps[best]), int(ev.steps[-1])
    msg = (
        f"{ev.name} was best at step {bs:,} ({evidence['best_value']:.4g}) and rose to "
        f"{evidence['last_value']:.4g} by step {ls:,} (+{evidence['rise_rel']:.0%}) while the training "
        f"loss {how} ({tb:.4g} -> {te:.4g}, {medians_text(rows)}): the run got worse on held-out data."
    )
    return codes.finding(
        "LD412",
        msg,
        first_step=bs,
        last_step=ls,
        hint=hint.format(step=bs),
        evidence={**evidence, "series": "eval"},
        confidence=0.8,
    )


def _finding(ev: EvalSeries, best: int, noise: float, tb: float, te: float, rows: tuple[int, int]) -> Finding:
    b, last = float(ev.values[best]), float(ev.values[-1])
    rise = last - b
    bs, ls = int(ev.steps[best]), int(ev.steps[-1])
    msg = (
        f"{ev.name} was best at step {bs:,} ({b:.4g}) and rose to {last:.4g} by step {ls:,} "
        f"(+{rise / abs(b):.0%}) while the training loss kept falling ({tb:.4g} -> {te:.4g}, "
        f"{medians_text(rows)}): overfitting."
    )
    return codes.finding(
        "LD410",
        msg,
        first_step=bs,
        last_step=ls,
        hint=f"Use the checkpoint at step {bs:,} (best {ev.name}); stop earlier or regularise (more data, dropout).",
        evidence=_rise_evidence(ev, best, noise, tb, te),
        confidence=0.8,
    )
