"""Eval metrics that are not losses: a collapse to the metric's worst (LD413) and a fall from its best (LD414).

Which way a metric is better comes from its name (:func:`logdoctor.vocab.direction`: accuracy, F1, BLEU,
mAP/AP, precision, recall up; WER, CER, error down). Losses and perplexities are LD410/LD412's; timings
and counts are no metric. One finding per code for the run, headlined by its main metric (the AP family
first), so that a detector's box and mask mAP50, mAP50-95, precision and recall give one finding, not eight.

- **Collapse (LD413)**: a score (never negative: a negative value is no score in [0, 1] or [0, 100])
  that had reached a level and then sat within ``worst_frac`` of 0 for ``min_run`` evaluations in a row
  (with or without a recovery after). The level reached before the stretch must be at least
  ``min_peak_frac`` of the best the metric ever reaches and at least ``min_peak_bands`` times the
  ``worst_frac`` band (so the fall lost at least half of it): a dip back near 0 while the metric is still
  in its first rise from nothing is the normal start of a model trained from scratch, not a collapse.
  The null (../shared/reallogs, the public logs and the blind corpus's dev split, the healthy runs and the
  healthy starts of the others, and the real Ultralytics runs in fixtures/writers/ultralytics): a score
  that came back within 1% of 0 after leaving it had reached at most 50% of its best before
  (mmdetection's small-object AP, for 2 evaluations), and at most 17% before a stretch of 3 or more
  (Ultralytics' mAP50-95 from scratch: 0.04 at epoch 15, under 0.01 for 6 epochs, then 0.23); the true
  collapses there had reached 89-100% of their best.
- **At its worst at every evaluation (LD413)**: a score within ``worst_frac`` of 0 at every one of at
  least ``min_evals`` evaluations, when the run had all the time it was to have (it ended as planned or
  was early-stopped) or it sat there for ``min_never_evals`` evaluations or more. A score at 0 for its
  first evaluations is how a detector trained from scratch starts: in the same null, healthy scores
  sat within 1% of 0 for up to 16 evaluations at the start (YOLOv5's mAP@.5:.95, every class at 0 for
  11 in Ultralytics' run), so 24 (1.5 times that) is needed when the run stopped before its plan or its
  plan is unknown. A score exactly 0 at every evaluation while a sibling score of the same kind is off
  its worst is a metric the model does not produce (Mask2Former's box AP), not a collapse.
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
from logdoctor.options import Option, at_least, fraction, int_opt, positive

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
        fraction("min_peak_frac"),
        at_least("min_peak_bands", 1.0),
        int_opt("min_never_evals", 3),
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
        min_peak_frac: float = 0.5,
        min_peak_bands: float = 2.0,
        min_never_evals: int = 24,
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
        self.min_peak_frac = min_peak_frac
        self.min_peak_bands = min_peak_bands
        self.min_never_evals = min_never_evals
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
        whole = _had_its_time(run)
        collapsed = [(m, c) for m in metrics if (c := self._collapse(m, metrics, whole)) is not None]
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

    def _collapse(self, m: Metric, siblings: list[Metric], whole: bool) -> tuple[int, int] | None:
        """(first, last) index of the collapse of a score (higher is better, never negative), or None.
        ``whole``: the run had all the training it was to have (a score at its worst throughout is then
        judged at any length). An error rate has no worst to sit at (WER, TER exceed 100%): it is judged
        for a fall only."""
        if not m.up or bool(np.any(m.values < 0)):
            return None
        near = self._near_worst(m)
        if near.all():
            return self._at_worst_throughout(m, siblings, whole)
        best: tuple[int, int] | None = None
        for i, j in _stretches(near):
            if i == 0 or j - i + 1 < self.min_run or not self._fell_from_a_level(m, i):
                continue
            if best is None or j - i > best[1] - best[0]:
                best = (i, j)
        return best

    def _at_worst_throughout(self, m: Metric, siblings: list[Metric], whole: bool) -> tuple[int, int] | None:
        """(0, last) when a score at its worst at every evaluation is a finding, else None."""
        if not whole and m.values.size < self.min_never_evals:
            return None  # a from-scratch start may sit at 0 this long
        exact_zero = bool(np.all(m.values == 0.0))
        alive = any(
            s.up and s.name != m.name and _same_kind(s.name, m.name) and not self._near_worst(s).all() for s in siblings
        )
        return None if exact_zero and alive else (0, int(m.values.size - 1))

    def _fell_from_a_level(self, m: Metric, i: int) -> bool:
        """Whether the score had reached a level before evaluation ``i``: ``min_peak_frac`` of its best
        ever, and ``min_peak_bands`` times the band it then fell into."""
        before = float(np.max(m.values[:i]))
        best = float(np.max(m.values))
        return before >= self.min_peak_frac * best and before >= self.min_peak_bands * self.worst_frac * m.scale

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


def _had_its_time(run: Run) -> bool:
    """Whether the run had all the training it was to have: it ran to its plan or was early-stopped."""
    st = run.meta.structure
    return st is not None and st.ending in ("finished", "early_stopped")


def _stretches(flags: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) index of each run of True in ``flags``, in order."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < flags.size:
        if flags[i]:
            j = i
            while j + 1 < flags.size and flags[j + 1]:
                j += 1
            out.append((i, j))
            i = j + 1
        else:
            i += 1
    return out


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
