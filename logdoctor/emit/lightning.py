"""PyTorch Lightning: one record per optimizer step, over its micro-batches and every rank.

Usage::

    loader = DataLoader(ds, batch_size=8, shuffle=True, collate_fn=RecordingCollator(pad))
    trainer = Trainer(callbacks=[LogdoctorCallback(jsonl="logdoctor.jsonl")])

The record rides in each batch (``RecordingCollator``), so Lightning may inject its
DistributedSampler, workers may collate, and validation batches are dropped. Batches that carry
no record are taken from ``recorder`` (a ``RecordingBatchSampler``'s, first in, first out).
The numeric statistics of each optimizer step go through ``pl_module.log_dict`` (to whatever
logger is configured, at its ``log_every_n_steps``, beside the loss of the same step); the JSONL
(rank 0) gets every optimizer step: the loss as ``training_step`` returned it (mean over the
micro-batches and ranks), the epoch and the record with ``batch_fp``.
Import this module only where lightning is installed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from logdoctor.emit.carry import take_carried, width_of
from logdoctor.emit.keys import FP_KEYS
from logdoctor.emit.recorder import BatchRecorder
from logdoctor.emit.session import EmitSession
from logdoctor.emit.torch import RecordingBatchSampler

try:
    from lightning.pytorch import Callback as _CallbackBase
except ImportError:  # pragma: no cover
    try:
        from pytorch_lightning import Callback as _CallbackBase  # type: ignore[assignment,unused-ignore]
    except ImportError:
        _CallbackBase = object  # type: ignore[assignment,misc,unused-ignore]


_NOTHING = (
    "logdoctor.emit: a training batch carries no record and no RecordingBatchSampler fed one: "
    "collate with RecordingCollator (or wrap the batch sampler) so batches can be recorded"
)
_NO_FP = (
    "logdoctor.emit: training batches carry no dataset indices, so no batch_fp is written: "
    "give each sample an 'idx' feature for RecordingCollator"
)


def _wrappers(loaders: Any) -> Iterator[RecordingBatchSampler]:
    """The RecordingBatchSamplers of the train loader(s) (a loader, or a dict / list of them)."""
    items = (
        loaders.values()
        if isinstance(loaders, Mapping)
        else (loaders if isinstance(loaders, list | tuple) else [loaders])
    )
    for loader in items:
        sampler = getattr(loader, "batch_sampler", None)
        if isinstance(sampler, RecordingBatchSampler):
            yield sampler


def _loss_of(outputs: Any) -> float | None:
    loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
    if loss is None:
        return None
    return float(loss.item() if hasattr(loss, "item") else loss)


class LogdoctorCallback(_CallbackBase):  # type: ignore[misc,unused-ignore]
    """Logs each optimizer step's batch statistics; writes the full record to ``jsonl`` when given."""

    def __init__(self, recorder: BatchRecorder | None = None, jsonl: str | Path | None = None) -> None:
        self.recorder = recorder
        self.session = EmitSession(jsonl)
        self.latest: dict[str, Any] = {}
        self._step = 0
        self._losses: list[float] = []

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        """Open the JSONL (an earlier run's file moved aside unless resuming)."""
        self._step = int(trainer.global_step)
        self.session.open(resuming=self._step > 0)

    def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
        """Lightning calls ``set_epoch`` only on ``loader.sampler`` and ``loader.batch_sampler.sampler``:
        a wrapped custom batch sampler (buckets) would repeat epoch 0, so call it here."""
        for sampler in _wrappers(getattr(trainer, "train_dataloader", None)):
            sampler.set_epoch(int(trainer.current_epoch))

    def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int) -> None:
        """Take the micro-batch's record out of the batch (or from the sampler's recorder)."""
        carried = take_carried(batch)
        if carried is not None:
            self.session.add(carried.pair(width_of(batch)))
        elif self.recorder is not None and len(self.recorder):
            self.session.add(self.recorder.take(1)[0])
        else:
            self.session.warn_once("none", _NOTHING)
            return
        if "batch_fp" not in self.session.micro[-1][0]:
            self.session.warn_once("fp", _NO_FP)

    def on_validation_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        """Evaluation batches are not training batches: drop their record."""
        take_carried(batch)

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        """At each optimizer step: combine micro-batches and ranks, log, write the line."""
        loss = _loss_of(outputs)
        if loss is not None:  # Lightning divides the returned loss by accumulate_grad_batches
            self._losses.append(loss * int(getattr(trainer, "accumulate_grad_batches", 1) or 1))
        if int(trainer.global_step) == self._step:
            return  # still accumulating
        self._step = int(trainer.global_step)
        mean = sum(self._losses) / len(self._losses) if self._losses else None
        self._losses = []
        loss_all = self.session.end_step(mean)
        self.latest = self.session.interval()
        if not self.latest:
            return
        numbers = {k: float(v) for k, v in self.latest.items() if k not in FP_KEYS}
        pl_module.log_dict(numbers, on_step=True, on_epoch=False, batch_size=int(numbers["n_seq"]))
        if loss_all is not None:
            self.session.write(self._step, loss_all, epoch=int(trainer.current_epoch), batch=self.latest)

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        """Close the JSONL file."""
        self.session.close()
