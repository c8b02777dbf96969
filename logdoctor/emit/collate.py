"""Record batches at the collator: the record travels inside the batch to where training uses it."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping, Sequence
from typing import Any

from logdoctor.emit.carry import RECORD_KEY, Carried
from logdoctor.emit.recorder import BatchRecorder


class RecordingCollator:
    """Wraps a data collator: notes each batch's lengths, and its dataset indices when the
    features carry them, then calls the wrapped collator.

    Args:
        collator: the collator to wrap (e.g. ``DataCollatorWithPadding(tok)``).
        recorder: where records of non-dict batches go (a new one by default: ``self.recorder``).
        length_key: the feature whose ``len()`` is the sequence length.
        index_key: a feature holding the sample's dataset index (added with
            ``ds.map(lambda _, i: {"idx": i}, with_indices=True)``); it is removed before the
            wrapped collator sees the features. Without it, batches get no fingerprint.

    When the collated batch is a dict (Hugging Face, most pipelines) the record rides in it under
    ``RECORD_KEY`` (an opaque ``Carried``), so it survives DataLoader worker processes and stays
    with its batch; the callbacks remove it where training consumes the batch (evaluation batches
    are dropped there). Other batches are recorded in ``self.recorder`` (first in, first out).
    """

    def __init__(self, collator: Callable[[list[dict[str, Any]]], Any],
                 recorder: BatchRecorder | None = None, length_key: str = "input_ids",
                 index_key: str | None = "idx") -> None:
        self.collator = collator
        self.recorder = recorder if recorder is not None else BatchRecorder()
        self.length_key = length_key
        self.index_key = index_key

    def __call__(self, features: Sequence[dict[str, Any]]) -> Any:
        feats = [dict(f) for f in features]
        indices = None
        if self.index_key and feats and all(self.index_key in f for f in feats):
            indices = [int(f.pop(self.index_key)) for f in feats]
        lengths = [len(f[self.length_key]) for f in feats]
        batch = self.collator(feats)
        if isinstance(batch, MutableMapping):
            batch[RECORD_KEY] = Carried(lengths, indices)
        else:
            self.recorder.record_lengths(lengths, indices)
        return batch
