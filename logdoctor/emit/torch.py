"""PyTorch: wrap a batch sampler so every batch it yields is recorded (statistics + fingerprint).

Usage (one line)::

    loader = DataLoader(ds, batch_sampler=RecordingBatchSampler(batch_sampler, lengths))
    for batch in loader:
        ...
        print(format_line(step, loss.item(), lr=lr, batch=loader.batch_sampler.pop()))

Under torch.distributed use ``pop_global()`` on every rank and write on rank 0.

Import this module only where torch is installed; ``logdoctor.emit`` never imports it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from logdoctor.emit.recorder import BatchRecorder, LengthSource

try:  # subclass torch's Sampler when torch is there; the logic itself is framework-free
    from torch.utils.data import Sampler as _SamplerBase
except ImportError:  # pragma: no cover - exercised in environments without torch
    _SamplerBase = object  # type: ignore[assignment,misc,unused-ignore]


#: Starts with "missing 1 required" so that Lightning recognises it and adds its own advice.
_REBUILD = (
    "missing 1 required argument 'lengths': RecordingBatchSampler(batch_sampler, lengths) wraps a batch "
    "sampler and cannot be re-created around another sampler, as Lightning does under DDP to inject its "
    "DistributedSampler. Shard inside the wrapped batch sampler (BatchSampler(DistributedSampler(ds), ...)) "
    "and pass Trainer(use_distributed_sampler=False), or record with RecordingCollator on a plain DataLoader"
)


class RecordingBatchSampler(_SamplerBase):  # type: ignore[misc,unused-ignore]
    """Yields the batches of ``batch_sampler`` unchanged and records each one.

    Args:
        batch_sampler: anything yielding lists of sample indices (a ``BatchSampler``, a custom
            bucketing sampler, a list of pre-built batches).
        lengths: each sample's length: an array by index, or a function of the index.
        pad_to: the padded length when the pipeline pads to a fixed size (default: batch max).
    """

    def __init__(
        self,
        batch_sampler: Iterable[Sequence[int]],
        lengths: LengthSource | None = None,
        pad_to: int | None = None,
        **rebuild: Any,
    ) -> None:
        if rebuild or lengths is None:  # Lightning re-creates batch samplers to inject its sampler
            raise TypeError(_REBUILD)
        self.batch_sampler = batch_sampler
        self.recorder = BatchRecorder(lengths, pad_to=pad_to)

    def __iter__(self) -> Iterator[Sequence[int]]:
        for batch in self.batch_sampler:
            self.recorder.record(batch)
            yield batch

    def __len__(self) -> int:
        return len(self.batch_sampler)  # type: ignore[arg-type]

    def set_epoch(self, epoch: int) -> None:
        """Forwarded to the wrapped batch sampler when it has ``set_epoch``, else to the sampler
        it draws from (``BatchSampler(DistributedSampler(...))``): without it every epoch would
        get the same batches in the same order, the very bug logdoctor detects."""
        for inner in (self.batch_sampler, getattr(self.batch_sampler, "sampler", None)):
            forward = getattr(inner, "set_epoch", None)
            if callable(forward):
                forward(epoch)
                return

    def __getattr__(self, name: str) -> Any:
        """Anything else (``sampler``, ``batch_size``, ``drop_last``...) is the wrapped sampler's."""
        if name in ("batch_sampler", "recorder") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.batch_sampler, name)

    def pop(self, n: int = 1) -> dict[str, Any]:
        """The record of the next step: the oldest ``n`` batches (gradient accumulation) merged."""
        return self.recorder.pop(n)

    def pop_global(self, n: int = 1) -> dict[str, Any]:
        """Like ``pop``, for the global batch under torch.distributed: every rank's ``n`` oldest
        batches combined (a collective: call it on every rank at every step; write the line where
        ``logdoctor.emit.dist.is_rank_zero()``). One process: the same as ``pop``."""
        return self.recorder.pop_global(n)
