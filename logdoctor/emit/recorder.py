"""Record each batch a sampler hands out, and give the records back one training step at a time."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from logdoctor.emit.dist import gather
from logdoctor.emit.stats import Pair, batch_fingerprint, batch_stats, combine

LengthSource = Sequence[int] | np.ndarray | Callable[[int], int]


class BatchRecorder:
    """A FIFO of per-batch records (statistics and fingerprint), framework-free.

    A DataLoader asks its sampler for batches ahead of the loop (prefetching), but hands the
    batches to the loop in the same order, so records are taken oldest first: one ``pop()`` per
    micro-batch, or ``pop(n)`` for n micro-batches of gradient accumulation.

    Args:
        lengths: the length of every sample, as an array indexed by sample index, or a function
            of the index (e.g. ``lambda i: len(dataset[i]["input_ids"])``).
        pad_to: the padded length, when the pipeline pads to a fixed size (default: batch max).
        maxlen: records kept at most (old unclaimed ones are dropped).
    """

    def __init__(self, lengths: LengthSource | None = None, pad_to: int | None = None, maxlen: int = 4096) -> None:
        self._lengths = lengths if callable(lengths) or lengths is None else np.asarray(lengths, dtype=np.int64)
        self.pad_to = pad_to
        self._pending: deque[Pair] = deque(maxlen=maxlen)
        self.last: dict[str, Any] = {}

    def lengths_of(self, indices: np.ndarray) -> np.ndarray:
        """The lengths of the given sample indices."""
        if self._lengths is None:
            raise ValueError("BatchRecorder: no lengths given; use record_lengths()")
        if callable(self._lengths):
            return np.fromiter((self._lengths(int(i)) for i in indices), dtype=np.int64, count=indices.size)
        return self._lengths[indices]

    def record(self, indices: Sequence[int] | np.ndarray) -> dict[str, Any]:
        """Record one batch; returns its record (statistics and ``batch_fp``)."""
        idx = np.asarray(indices, dtype=np.int64).ravel()
        rec: dict[str, Any] = batch_stats(self.lengths_of(idx), self.pad_to)
        rec["batch_fp"] = batch_fingerprint(idx)
        self._pending.append((rec, idx))
        return rec

    def record_lengths(
        self,
        lengths: Sequence[int],
        indices: Sequence[int] | None = None,
    ) -> dict[str, Any]:
        """Record one batch from its lengths directly; fingerprinted only when indices are known."""
        rec: dict[str, Any] = batch_stats(lengths, self.pad_to)
        idx = np.asarray(indices if indices is not None else [], dtype=np.int64)
        if indices is not None:
            rec["batch_fp"] = batch_fingerprint(idx)
        self._pending.append((rec, idx))
        return rec

    def add(self, record: dict[str, Any], indices: Sequence[int] | np.ndarray = ()) -> None:
        """Queue a record made elsewhere (a collator's, another rank's)."""
        self._pending.append((record, np.asarray(indices, dtype=np.int64).ravel()))

    def take(self, n: int | None = None) -> list[Pair]:
        """The oldest ``n`` (record, indices) pairs, unmerged; every pending one when ``n`` is None."""
        count = len(self._pending) if n is None else min(n, len(self._pending))
        return [self._pending.popleft() for _ in range(count)]

    def pop(self, n: int = 1) -> dict[str, Any]:
        """The next training step's record: the oldest ``n`` batches merged ({} when none)."""
        taken = self.take(n)
        if taken:
            self.last = combine(taken)
        return self.last if taken else {}

    def pop_global(self, n: int = 1) -> dict[str, Any]:
        """Like ``pop``, for the global batch under torch.distributed: every rank's ``n`` oldest
        batches combined (a collective: call it on every rank at every step; write the line where
        ``logdoctor.emit.dist.is_rank_zero()``). One process: the same as ``pop``."""
        taken = combine(gather(self.take(n)))
        if taken:
            self.last = taken
        return taken

    def __len__(self) -> int:
        return len(self._pending)
