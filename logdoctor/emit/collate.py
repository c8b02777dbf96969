"""Record batches at the collator: the record travels inside the batch to where training uses it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

from logdoctor.emit.carry import RECORD_KEY, Carried, take_carried, width_of
from logdoctor.emit.recorder import BatchRecorder

_WORKER = (
    "logdoctor.emit.RecordingCollator: the collated batch is a {kind}, not a dict, and it is collated "
    "in a DataLoader worker process, so its record cannot reach the training process (nothing would "
    "be recorded). Return a dict from the collate function (the record then rides in the batch; take "
    "it out with collator.take(batch)), or use num_workers=0, or, for a map-style dataset, wrap the "
    "batch sampler in RecordingBatchSampler instead"
)


def _in_worker() -> bool:
    """Whether this runs in a DataLoader worker process (torch only looked up, never imported)."""
    torch = sys.modules.get("torch")
    return torch is not None and torch.utils.data.get_worker_info() is not None


def _length_of(item: Any, key: str) -> int:
    """A sample's length: ``len(item[key])`` for a dict item, ``len(item)`` for a 1-D sequence of
    token ids (a list of ints, a 1-D tensor or array); anything else needs ``length=``."""
    if isinstance(item, Mapping):
        if key not in item:
            raise TypeError(
                f"RecordingCollator: a sample has no {key!r} (its keys: {sorted(map(str, item))}); "
                "pass length_key= the feature holding the token ids, or length=a function of the sample"
            )
        return len(item[key])
    shape = getattr(item, "shape", None)
    if shape is not None and len(shape) == 1:
        return int(shape[0])
    if isinstance(item, list) and (not item or isinstance(item[0], int)):
        return len(item)
    raise TypeError(
        f"RecordingCollator: a sample is a {type(item).__name__}, not a dict of features nor a 1-D "
        "sequence of token ids; pass length=a function of the sample, e.g. length=lambda s: len(s[0]) "
        "(and index= for batch_fp)"
    )


class RecordingCollator:
    """Wraps a data collator: notes each batch's lengths, and its dataset indices when the
    samples carry them, then calls the wrapped collator.

    Args:
        collator: the collator to wrap (e.g. ``DataCollatorWithPadding(tok)``).
        recorder: where records go when they do not ride in the batch, and where ``take`` queues
            them (a new one by default: ``self.recorder``).
        length_key: for dict samples, the feature whose ``len()`` is the sequence length.
        index_key: for dict samples, a feature holding the sample's dataset index (added with
            ``ds.map(lambda _, i: {"idx": i}, with_indices=True)``); it is removed before the
            wrapped collator sees the samples. Without it, batches get no fingerprint.
        length: a function of a sample giving its length, for samples of any type (overrides
            ``length_key``). Without it, a sample must be a dict with ``length_key`` or a 1-D
            sequence of token ids (a list of ints, a 1-D tensor or array).
        index: a function of a sample giving its dataset index (overrides ``index_key``).

    When the collated batch is a dict (Hugging Face, most pipelines) the record rides in it under
    ``RECORD_KEY`` (an opaque ``Carried``), so it survives DataLoader worker processes and stays
    with its batch; the callbacks remove it where training consumes the batch (evaluation batches
    are dropped there); a plain loop calls ``take(batch)``. Other batches are recorded in
    ``self.recorder`` (first in, first out), which only works without worker processes: in a
    worker such a batch raises a TypeError that says what to change.
    """

    def __init__(
        self,
        collator: Callable[[list[Any]], Any],
        recorder: BatchRecorder | None = None,
        length_key: str = "input_ids",
        index_key: str | None = "idx",
        length: Callable[[Any], int] | None = None,
        index: Callable[[Any], int] | None = None,
    ) -> None:
        self.collator = collator
        self.recorder = recorder if recorder is not None else BatchRecorder()
        self.length_key = length_key
        self.index_key = index_key
        self.length = length
        self.index = index

    def _indices(self, feats: list[Any]) -> list[int] | None:
        if self.index is not None:
            return [int(self.index(f)) for f in feats]
        key = self.index_key
        if key and feats and all(isinstance(f, Mapping) and key in f for f in feats):
            return [int(f.pop(key)) for f in feats]
        return None

    def __call__(self, features: Sequence[Any]) -> Any:
        feats = [dict(f) if isinstance(f, Mapping) else f for f in features]
        indices = self._indices(feats)
        lengths = [int(self.length(f)) if self.length is not None else _length_of(f, self.length_key) for f in feats]
        batch = self.collator(feats)
        if isinstance(batch, MutableMapping):
            batch[RECORD_KEY] = Carried(lengths, indices)
        elif _in_worker():
            raise TypeError(_WORKER.format(kind=type(batch).__name__))
        else:
            self.recorder.record_lengths(lengths, indices)
        return batch

    def take(self, batch: Any) -> dict[str, Any] | None:
        """Take the record out of a dict batch (before the model sees the batch: HF models take
        ``**batch`` and would swallow it) and queue it in ``self.recorder``; returns the record
        (statistics and ``batch_fp``), None when the batch carries none (non-dict batches were
        queued when collated). Then ``self.recorder.pop(n)`` gives each optimizer step's record."""
        carried = take_carried(batch)
        if carried is None:
            return None
        rec, idx = carried.pair(width_of(batch))
        self.recorder.add(rec, idx)
        return rec
