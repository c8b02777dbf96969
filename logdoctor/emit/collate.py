"""Record batches at the collator, for loops whose sampler you do not own (Hugging Face Trainer)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from logdoctor.emit.recorder import BatchRecorder


class RecordingCollator:
    """Wraps a data collator: records each batch's lengths, and its fingerprint when the
    features carry their dataset index, then calls the wrapped collator.

    Args:
        collator: the collator to wrap (e.g. ``DataCollatorWithPadding(tok)``).
        recorder: where records go (a new one by default: ``self.recorder``).
        length_key: the feature whose ``len()`` is the sequence length.
        index_key: a feature holding the sample's dataset index (added with
            ``ds.map(lambda _, i: {"idx": i}, with_indices=True)``); it is removed before the
            wrapped collator sees the features. Without it, batches get no fingerprint.

    The collator runs where the DataLoader collates: with worker processes the records stay in
    the workers, so use it with ``num_workers=0`` (the Trainer's default) or record at the sampler.
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
        self.recorder.record_lengths([len(f[self.length_key]) for f in feats], indices)
        return self.collator(feats)
