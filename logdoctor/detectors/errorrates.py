"""How far a run got in epochs, and which eval metrics are error rates bounded by 100% (WER, CER, error_rate).

Shared by the rules that read a held-out series at its no-learning level over many epochs
(evalmetrics.py for an error rate at its worst, chance.py for a held-out loss at ln k).
"""

from __future__ import annotations

from logdoctor import vocab
from logdoctor.model import Run

#: Error rates bounded by 100% where a model that learned nothing sits: speech recognition's WER and CER
#: (an empty or wrong transcript), and a classifier's ``error_rate``. Not TER: a healthy sockeye run
#: (../shared/reallogs/sockeye3_signwriting_train_original.log) sits at TER 1.14-1.26 at all its 57
#: evaluations: against short references, insertions put an edit rate above 100% while the model learns.
ERROR_RATES = frozenset({"wer", "cer"})


def is_error_rate(name: str) -> bool:
    """A WER, a CER, or a classifier's error rate (``valid_error_rate``, ``err_rate``)."""
    words = set(vocab.normalize_key(name).split("_"))
    return bool(words & ERROR_RATES) or bool(words & {"error", "err"} and "rate" in words)


def epochs_until(run: Run, step: int) -> float | None:
    """Epochs of training from the run's first row to ``step``, from structure's steps per epoch; None
    when the log does not say how long an epoch is."""
    st = run.meta.structure
    if st is None or not st.steps_per_epoch or st.first_step is None:
        return None
    return (step - st.first_step + (st.stride or 1)) / st.steps_per_epoch
