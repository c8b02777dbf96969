"""A batch's record travels inside the batch, from the collator to where training consumes it."""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from typing import Any

import numpy as np

from logdoctor.emit.stats import Pair, batch_fingerprint, batch_stats

#: The key under which a collated batch (a dict) carries its record.
RECORD_KEY = "logdoctor_batch"


class Carried:
    """The sample lengths and (when known) dataset indices of one collated batch.

    An opaque object on purpose: DataLoader workers pickle it, ``pin_memory``, Lightning's
    ``batch_to_device`` and the Trainer's ``_prepare_inputs`` pass it through untouched.
    """

    __slots__ = ("indices", "lengths")

    def __init__(self, lengths: Sequence[int], indices: Sequence[int] | None) -> None:
        self.lengths = [int(n) for n in lengths]
        self.indices = None if indices is None else [int(i) for i in indices]

    def __getstate__(self) -> tuple[list[int], list[int] | None]:
        return self.lengths, self.indices

    def __setstate__(self, state: tuple[list[int], list[int] | None]) -> None:
        self.lengths, self.indices = state

    def pair(self, pad_to: int | None = None) -> Pair:
        """(record, indices): statistics, padded to ``pad_to`` when that is the batch's width."""
        width = pad_to if pad_to is not None and pad_to >= max(self.lengths) else None
        rec: dict[str, Any] = batch_stats(self.lengths, width)
        idx = np.asarray(self.indices if self.indices is not None else [], dtype=np.int64)
        if self.indices is not None:
            rec["batch_fp"] = batch_fingerprint(idx)
        return rec, idx


def take_carried(batch: Any) -> Carried | None:
    """Remove and return the record a batch carries (None when it carries none)."""
    if isinstance(batch, MutableMapping) and RECORD_KEY in batch:
        found = batch.pop(RECORD_KEY)
        return found if isinstance(found, Carried) else None
    return None


def width_of(batch: Any) -> int | None:
    """The padded length of a batch's ``input_ids`` (a tensor or array), when it has one."""
    ids = batch.get("input_ids") if isinstance(batch, MutableMapping) else None
    shape = getattr(ids, "shape", None)
    return int(shape[-1]) if shape else None
