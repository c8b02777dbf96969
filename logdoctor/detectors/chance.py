"""LD421: a loss that sits at chance level (ln k) for the whole run: the model learns nothing.

A binary or pairwise objective (a reward model's -log σ(r_chosen - r_rejected), binary cross-entropy)
starts at ln 2 ≈ 0.693 and must fall below it to learn anything; a run whose loss stays at ln 2 from
start to end (llamafactory_trainer_log_360_pairwise_acc.jsonl: median 0.69 over 202 steps) learned
nothing. Only k = 2: ln k for larger k is too easy to hit by coincidence (healthy real runs end within
2% of ln 7, ln 3, ln 5 or ln 6 while falling), so a k-class claim needs the class count from the log:
a ``classes`` fact (``num_labels``/``num_classes``... stated on a log line or in the W&B/MLflow
config, or the ``id2label`` of a classification head in the ``config.json`` beside a HF
``trainer_state.json``; never a vocabulary size, whose ln |V| a language model starts near but whose chance level is
the unigram entropy). With k stated, chance is ln k and only ln k (a 10-class loss at 0.69 learns).
Null: the 43 healthy and faulty real logs of ../shared/reallogs and the 20 real trainings of
fixtures/realruns; none has its whole-run and last-quarter medians within ``tolerance`` of ln 2 while
falling less than ``max_fall`` (the nearest: a Keras run at +15% of ln 2, falling 17%).

A held-out loss says it in fewer rows: with k stated, an evaluation loss whose best over at least
``min_evals`` evaluations, spread over ``min_epochs`` epochs or more, is still within ``tolerance`` of
ln k (or above it) never beat uniform guessing on held-out data, whatever the training loss did (a
model that memorises its training set while its validation loss never leaves ln k). Null: the real
logs with a stated class count and an evaluation loss (../shared/reallogs and the blind corpus's dev
split) reach 7-18% of ln k at their best when healthy (food-101, 101 classes; MOABB EEG, 4 classes);
the first epochs at chance are the start of any classifier, hence the epochs (as the eval metrics'
rule for an error rate at its worst: healthy runs leave it within about one epoch).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from logdoctor import codes, vocab
from logdoctor.detectors import robust
from logdoctor.detectors.base import NO_CHANCE_LEVEL, TOO_FEW_ROWS, Analyzer, Detection
from logdoctor.detectors.constantloss import MAX_RANGE, constant_level
from logdoctor.detectors.errorrates import epochs_until
from logdoctor.detectors.evalseries import eval_series
from logdoctor.model import EPOCH, LINE_NO, LOSS, STEP, ConfigFact, Finding, Run
from logdoctor.options import Option, fraction, int_opt, positive


def stated_classes(run: Run) -> ConfigFact | None:
    """The run's ``classes`` fact when it states a whole count (1: HF's regression head)."""
    for fact in run.meta.config_facts:
        if fact.name == "classes" and not isinstance(fact.value, str | bool) and fact.value == int(fact.value):
            return fact if fact.value >= 1 else None
    return None


class ChanceLossDetector(Analyzer):
    """LD421 when the loss's whole-run and last-quarter medians sit within ``tolerance`` of ln k (k
    the class count the run states, else 2) and the last quarter is less than ``max_fall`` below the first."""

    name = "loss-at-chance"
    options: ClassVar[tuple[Option, ...]] = (
        fraction("tolerance"),
        fraction("max_fall"),
        int_opt("min_rows", 8),
        int_opt("min_evals", 3),
        positive("min_epochs"),
    )

    def __init__(
        self,
        *,
        tolerance: float = 0.05,
        max_fall: float = 0.05,
        min_rows: int = 40,
        min_evals: int = 5,
        min_epochs: float = 5.0,
    ) -> None:
        self.tolerance = tolerance
        self.max_fall = max_fall
        self.min_rows = min_rows
        self.min_evals = min_evals
        self.min_epochs = min_epochs

    def analyze(self, run: Run) -> Detection:
        """At most one finding: the training loss over the whole run, else a held-out loss."""
        found = self._train(run)
        if found.findings:
            return found
        held_out = self._held_out(run)
        return Detection((held_out,)) if held_out is not None else found

    def _held_out(self, run: Run) -> Finding | None:
        """LD421 when an evaluation loss never went below ``1 - tolerance`` of ln k (k stated) at its
        ``min_evals`` or more evaluations over ``min_epochs`` or more epochs."""
        fact = stated_classes(run)
        k = int(fact.value) if fact is not None and isinstance(fact.value, int | float) else 0
        if fact is None or k < 2 or run.evals.height == 0 or STEP not in run.evals.columns:
            return None
        chance = math.log(k)
        for col in run.evals.columns:
            if col in (STEP, LINE_NO, EPOCH) or not vocab.classify(col).is_loss:
                continue
            ser = eval_series(run, col)
            if ser.n < self.min_evals:
                continue
            best = float(np.min(ser.values))
            epochs = epochs_until(run, int(ser.steps[-1]))
            if best < (1 - self.tolerance) * chance or epochs is None or epochs < self.min_epochs:
                continue
            return codes.finding(
                "LD421",
                f"{col} never went below chance level at any of its {ser.n} evaluations over {epochs:.3g} "
                f"epochs: best {best:.4g} against {_against(k, chance, fact)}: the model never "
                "beat uniform guessing on held-out data.",
                first_step=int(ser.steps[0]),
                last_step=int(ser.steps[-1]),
                confidence=0.8,
                evidence={
                    "metric": col,
                    "best_eval_loss": round(best, 4),
                    "chance_loss": round(chance, 4),
                    "classes": k,
                    "evals": ser.n,
                    "epochs": round(epochs, 3),
                    "tolerance": self.tolerance,
                },
            )
        return None

    def _train(self, run: Run) -> Detection:
        """LD421 when the training loss sits at chance level for the whole run."""
        s = robust.series(run, LOSS)
        if s.n < self.min_rows:
            return Detection(skipped=TOO_FEW_ROWS)
        if constant_level(s.values, MAX_RANGE) is not None:
            return Detection()  # a loss that never moves is constantloss.py's (at ln k too)
        q = s.n // 4
        whole, first, last = (float(robust.median(v)) for v in (s.values, s.values[:q], s.values[-q:]))
        fact = stated_classes(run)
        k = int(fact.value) if fact is not None else 2
        if k < 2:  # one output (num_labels=1): a regression loss has no chance level
            return Detection(skipped=NO_CHANCE_LEVEL)
        chance = math.log(k)
        near = all(abs(m / chance - 1) <= self.tolerance for m in (whole, last))
        fall = (first - last) / first if first > 0 else 0.0
        if not near or fall >= self.max_fall:
            return Detection()
        ev = {
            "median_loss": round(whole, 4),
            "first_quarter_median": round(first, 4),
            "last_quarter_median": round(last, 4),
            "chance_loss": round(chance, 4),
            "classes": k,
            "fall": round(fall, 4),
            "tolerance": self.tolerance,
            "rows": s.n,
        }
        return Detection(
            (
                codes.finding(
                    "LD421",
                    f"The loss sits at chance level for the whole run: median {whole:.4g} over {s.n} rows, "
                    f"{last:.4g} in its last quarter, against {_against(k, chance, fact)}; "
                    f"the last quarter is {abs(fall):.0%} {'below' if fall > 0 else 'above'} the first ({first:.4g}; "
                    f"medians of {q} rows each): the model learns nothing.",
                    first_step=int(s.steps[0]),
                    last_step=int(s.steps[-1]),
                    confidence=0.8,
                    evidence=ev,
                ),
            )
        )


def _against(k: int, chance: float, fact: ConfigFact | None) -> str:
    """What chance is here and why: ln 2 of a binary objective, or ln k of the stated classes."""
    if fact is None:
        return f"ln 2 = {chance:.4f} for a binary or pairwise objective"
    return f"ln {k} = {chance:.4f} for {k} classes ({fact.source})"
