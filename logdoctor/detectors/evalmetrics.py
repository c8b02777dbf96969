"""Eval metrics that are not losses: a collapse to the metric's worst (LD413) and a fall from its best (LD414).

Which way a metric is better comes from its name (:func:`logdoctor.vocab.direction`: accuracy, F1, BLEU,
mAP/AP, precision, recall up; WER, CER, error down). Losses and perplexities are LD410/LD412's; timings
and counts are no metric. One finding per code for the run, headlined by its main metric (the AP family
first), so that a detector's box and mask mAP50, mAP50-95, precision and recall give one finding, not eight.

- **Collapse (LD413)**: a score (never negative: a negative value is no score in [0, 1] or [0, 100])
  sits within ``worst_frac`` of 0 at every one of at least ``min_evals`` evaluations, or for ``min_run`` evaluations
  in a row after it had been off its worst (with or without a recovery after). A stretch at the worst at
  the start that ends when the metric starts to rise is the normal start of a detector trained from
  scratch, not a collapse. A score exactly 0 at every evaluation while a sibling score of the same
  evaluations is off its worst is a metric the model does not produce (Mask2Former's box AP), not a
  collapse.
- **Never off its worst (LD413)**: an error rate (WER, CER, error_rate: ``errorrates.py``) at or above
  ``stuck_frac`` of 100% at every one of at least ``min_evals`` evaluations spread over at least
  ``min_epochs`` epochs of training:
  the model never produced a usable transcript or label. The null: healthy real runs whose WER/CER starts
  at 100% (wav2vec2 CTC fine-tunes, an empty transcript until the model emits characters: ../shared/reallogs
  and the blind corpus's dev split) leave 95% within 0.2-1.0 epochs (fairseq's HuBERT CTC fine-tune by its
  third epoch counter); no healthy run's best error rate there is above 74% (whisper_ja's WER).
- **Fall from best (LD414)**: the median of the last ``tail`` evaluations, and the last one, are worse
  than the best level (the median of the best evaluation and its two neighbours: one lucky early
  evaluation, YOLO's precision at epoch 1 from few predictions, is no best) by ``min_rel_fall`` of it
  and by ``noise_k`` times the metric's noise. The null: on the real logs whose truth is a healthy run
  (../shared/reallogs, the blind corpus's dev split), the largest such fall of a metric judged here is
  8.5% (a wav2vec2 run's eval WER); true falls (overfitting runs) are 31-55%; 25% sits between.
  Precision and recall trade against each other as a detector's threshold moves: they
  are judged for a collapse only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from logdoctor import codes, vocab
from logdoctor.detectors.base import NO_EVAL, NO_EVAL_SCORE, Analyzer, Detection
from logdoctor.detectors.errorrates import epochs_until, is_error_rate
from logdoctor.detectors.evalnoise import NOT_METRICS
from logdoctor.detectors.evalseries import eval_series
from logdoctor.detectors.overfitting import eval_noise
from logdoctor.model import EPOCH, LINE_NO, STEP, Finding, Run
from logdoctor.options import Option, fraction, int_opt, positive

#: Words of metrics judged for a collapse only (they trade against each other).
TRADE_OFF = frozenset({"precision", "recall", "p", "r"})
#: The order in which a family's headline metric is chosen (first word that a metric's name holds).
HEADLINE = ("map50_95", "map", "ap", "accuracy", "acc", "f1", "bleu", "rouge", "wer", "cer", "precision", "recall")
_WORDS = re.compile(r"[a-z]+\d*(?:_95)?")


@dataclass(frozen=True, slots=True)
class Metric:
    """One eval metric's series, oriented: ``score`` is higher-better, ``worst`` its worst score."""

    name: str
    steps: np.ndarray
    values: np.ndarray
    up: bool
    scale: float

    @property
    def score(self) -> np.ndarray:
        """The values, higher is better."""
        return self.values if self.up else -self.values

    @property
    def worst(self) -> float:
        """The worst score: 0 for a score, -100% for an error rate."""
        return 0.0 if self.up else -self.scale


def _headline_rank(name: str) -> int:
    low = vocab.normalize_key(name)
    for i, word in enumerate(HEADLINE):
        if word in low.split("_") or low.replace("_", "").find(word.replace("_", "")) >= 0:
            return i
    return len(HEADLINE)


def eval_metrics(run: Run, min_evals: int) -> list[Metric]:
    """The run's eval metrics that are not losses, with their direction, each with ``min_evals`` points."""
    out: list[Metric] = []
    for col in run.evals.columns:
        low = col.lower()
        if col in (STEP, LINE_NO, EPOCH) or any(k in low for k in NOT_METRICS) or vocab.is_aggregate(col):
            continue
        field = vocab.classify(col)
        words = set(vocab.normalize_key(col).split("_"))
        if field.is_loss or field.is_perplexity or words & {"best", "train", "loss"}:
            continue
        way = vocab.direction(col)
        if way is None:
            continue
        ser = eval_series(run, col)
        if ser.n < min_evals:
            continue
        scale = 100.0 if float(np.max(np.abs(ser.values))) > 1.5 else 1.0
        out.append(Metric(col, ser.steps, ser.values, way is vocab.Direction.UP, scale))
    return out


class EvalMetricDetector(Analyzer):
    """LD413 when eval metrics collapse to their worst, LD414 when they fall from their best."""

    name = "eval-metrics"
    options: ClassVar[tuple[Option, ...]] = (
        int_opt("min_evals", 3),
        int_opt("min_run", 2),
        fraction("worst_frac"),
        int_opt("min_fall_evals", 4),
        fraction("stuck_frac"),
        positive("min_epochs"),
        int_opt("tail", 1),
        fraction("min_rel_fall"),
        positive("noise_k"),
    )

    def __init__(
        self,
        *,
        min_evals: int = 3,
        min_run: int = 3,
        worst_frac: float = 0.01,
        min_fall_evals: int = 6,
        tail: int = 3,
        min_rel_fall: float = 0.25,
        noise_k: float = 4.0,
        stuck_frac: float = 0.95,
        min_epochs: float = 5.0,
    ) -> None:
        self.min_evals = min_evals
        self.min_run = min_run
        self.worst_frac = worst_frac
        self.min_fall_evals = min_fall_evals
        self.tail = tail
        self.min_rel_fall = min_rel_fall
        self.noise_k = noise_k
        self.stuck_frac = stuck_frac
        self.min_epochs = min_epochs

    def analyze(self, run: Run) -> Detection:
        """At most one LD413 and one LD414, each naming every metric it holds."""
        if run.evals.height == 0 or STEP not in run.evals.columns:
            return Detection(skipped=NO_EVAL)
        metrics = eval_metrics(run, self.min_evals)
        if not metrics:
            return Detection(skipped=NO_EVAL_SCORE)
        collapsed = [(m, c) for m in metrics if (c := self._collapse(m, metrics)) is not None]
        stuck = [(m, e) for m in metrics if (e := self._never_learned(m, run)) is not None]
        names = {m.name for m, _ in collapsed} | {m.name for m, _ in stuck}
        fallen = [(m, f) for m in metrics if m.name not in names and (f := self._fall(m)) is not None]
        out: list[Finding] = []
        if collapsed:
            out.append(_collapse_finding(collapsed))
        elif stuck:
            out.append(_never_finding(stuck, self.stuck_frac))
        if fallen:
            out.append(_fall_finding(fallen))
        return Detection(tuple(out))

    def _near_worst(self, m: Metric) -> np.ndarray:
        return np.asarray(m.score <= m.worst + self.worst_frac * m.scale)

    def _collapse(self, m: Metric, siblings: list[Metric]) -> tuple[int, int] | None:
        """(first, last) index of the collapse of a score (higher is better, never negative), or None.
        An error rate has no worst to sit at (WER, TER exceed 100%): it is judged for a fall only."""
        if not m.up or bool(np.any(m.values < 0)):
            return None
        near = self._near_worst(m)
        if near.all():
            exact_zero = m.up and bool(np.all(m.values == 0.0))
            alive = any(
                s.up and s.name != m.name and _same_kind(s.name, m.name) and not self._near_worst(s).all()
                for s in siblings
            )
            return None if exact_zero and alive else (0, int(near.size - 1))
        seen_off = np.cumsum(~near) > 0  # the metric had been off its worst before this evaluation
        best: tuple[int, int] | None = None
        i = 0
        while i < near.size:
            if near[i] and i > 0 and seen_off[i - 1]:
                j = i
                while j + 1 < near.size and near[j + 1]:
                    j += 1
                if j - i + 1 >= self.min_run and (best is None or j - i > best[1] - best[0]):
                    best = (i, j)
                i = j + 1
            else:
                i += 1
        return best

    def _never_learned(self, m: Metric, run: Run) -> float | None:
        """The epochs an error rate spent at or above ``stuck_frac`` of 100% at every evaluation, when
        they are ``min_epochs`` or more; else None."""
        if m.up or not is_error_rate(m.name) or bool(np.any(m.values < 0)):
            return None
        if not bool(np.all(m.values >= self.stuck_frac * m.scale)):
            return None
        epochs = epochs_until(run, int(m.steps[-1]))
        return epochs if epochs is not None and epochs >= self.min_epochs else None

    def _fall(self, m: Metric) -> tuple[int, float, float, float] | None:
        """(best index, best level, end level, noise) of a fall from the best, or None."""
        words = set(vocab.normalize_key(m.name).split("_"))
        if (
            m.values.size < self.min_fall_evals
            or words & TRADE_OFF
            or any(w.startswith(("precision", "recall")) for w in words)
        ):
            return None
        s = m.score
        b = int(np.argmax(s))
        if s.size - b - 1 < self.tail:
            return None
        lo = min(max(0, b - 1), s.size - 3)
        best_level = float(np.median(s[lo : lo + 3]))
        end_level = float(np.median(s[-self.tail :]))
        noise = eval_noise(s)
        need = max(self.min_rel_fall * abs(best_level), self.noise_k * noise)
        if best_level - end_level <= 0 or best_level - end_level < need or best_level - float(s[-1]) < need:
            return None
        return b, best_level, end_level, noise


def _same_kind(a: str, b: str) -> bool:
    """Two metrics of one kind for different outputs (Mask2Former's ``bbox/AP`` and ``segm/AP``: the
    same score of another head), not two scores of one output (PaddleOCR's exact-match ``acc`` and
    the partial credit ``norm_edit_dis`` of the same predictions: an exact-match accuracy at 0 while
    the partial credit rises is a model whose predictions are never right, not an output it lacks)."""
    return bool(_kinds(a) & _kinds(b))


def _kinds(name: str) -> set[str]:
    """The higher-better score words of a metric's name, the AP family (``AP50``, ``mAP``, ``APs``) as one."""
    words = vocab.normalize_key(name).split("_")
    return {
        "ap" if re.fullmatch(r"m?ap\d*[a-z]?", w) else w
        for w in words
        if w in vocab.HIGHER or re.fullmatch(r"m?ap\d*[a-z]?", w)
    }


def _rank(item: tuple[Metric, object]) -> tuple[int, str]:
    return _headline_rank(item[0].name), item[0].name


def _others(names: list[str]) -> str:
    if not names:
        return ""
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f" With it: {shown}."


def _collapse_finding(items: list[tuple[Metric, tuple[int, int]]]) -> Finding:
    ordered = sorted(items, key=_rank)
    m, (i, j) = ordered[0]
    worst = "0" if m.up else f"{m.scale:g}"
    whole = i == 0 and j == m.values.size - 1
    where = (
        f"at every one of its {m.values.size} evaluations"
        if whole
        else f"for {j - i + 1} evaluations in a row from step {int(m.steps[i]):,}"
        + (" (it recovered after)" if j < m.values.size - 1 else " to the end of the run")
    )
    before = m.values[: max(i, 1)]  # the best it had reached before the stretch, not after a recovery
    peak = float(np.max(before) if m.up else np.min(before))
    msg = (
        f"{m.name} sat at its worst (within {0.01 * m.scale:g} of {worst}) {where}"
        + ("" if whole else f", after reaching {peak:.4g}")
        + ": the model's predictions are of no use "
        "on held-out data there." + _others([o.name for o, _ in ordered[1:]])
    )
    ev: dict[str, float | int | str] = {
        "metric": m.name,
        "evals": int(m.values.size),
        "first_step": int(m.steps[i]),
        "last_step": int(m.steps[j]),
        "evals_at_worst": j - i + 1,
        "best_value": peak,
        "metrics": len(ordered),
    }
    return codes.finding(
        "LD413", msg, first_step=int(m.steps[i]), last_step=int(m.steps[j]), confidence=0.9, evidence=ev
    )


def _never_finding(items: list[tuple[Metric, float]], frac: float) -> Finding:
    ordered = sorted(items, key=_rank)
    m, epochs = ordered[0]
    best = float(np.min(m.values))
    msg = (
        f"{m.name} stayed at or above {frac * m.scale:g}, near its worst ({m.scale:g}: every word or label "
        f"wrong), at all its {m.values.size} evaluations over {epochs:.3g} epochs of training (best {best:.4g}): "
        "the model never learned to produce a usable output on held-out data."
        + _others([o.name for o, _ in ordered[1:]])
    )
    ev: dict[str, float | int | str] = {
        "metric": m.name,
        "evals": int(m.values.size),
        "epochs": round(epochs, 3),
        "best_value": best,
        "stuck_at_or_above": frac * m.scale,
        "metrics": len(ordered),
    }
    return codes.finding(
        "LD413", msg, first_step=int(m.steps[0]), last_step=int(m.steps[-1]), confidence=0.8, evidence=ev
    )


def _fall_finding(items: list[tuple[Metric, tuple[int, float, float, float]]]) -> Finding:
    ordered = sorted(items, key=_rank)
    m, (b, best_level, end_level, noise) = ordered[0]
    sign = 1.0 if m.up else -1.0
    best_v, end_v = sign * best_level, sign * end_level
    rel = (best_level - end_level) / abs(best_level) if best_level else float("inf")
    msg = (
        f"{m.name} fell from its best ({best_v:.4g} around step {int(m.steps[b]):,}) to {end_v:.4g} over its "
        f"last evaluations ({rel:.0%} {'below' if m.up else 'above'} its best, noise {noise:.2g}): the run "
        "ended worse on held-out data than it had been." + _others([o.name for o, _ in ordered[1:]])
    )
    ev: dict[str, float | int | str] = {
        "metric": m.name,
        "best_step": int(m.steps[b]),
        "best_level": best_v,
        "end_level": end_v,
        "fall_rel": rel,
        "eval_noise": noise,
        "evals": int(m.values.size),
        "metrics": len(ordered),
    }
    return codes.finding(
        "LD414", msg, first_step=int(m.steps[b]), last_step=int(m.steps[-1]), confidence=0.8, evidence=ev
    )
