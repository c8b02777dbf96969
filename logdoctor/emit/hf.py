"""Hugging Face Trainer: batch statistics and fingerprints recorded where training consumes them.

Usage::

    collator = RecordingCollator(DataCollatorWithPadding(tok))   # indices ride in the batch
    trainer = Trainer(..., data_collator=collator)
    LogdoctorCallback.attach(trainer, jsonl=f"{out}/logdoctor.jsonl")

A forward pre-hook on the model takes each training micro-batch's record out of the batch (so
``dataloader_num_workers`` > 0 works, and evaluation batches are never counted); each optimizer
step combines its micro-batches and, under DDP, every rank's share of the global batch; each
training log gets the statistics merged over its logging interval, before TensorBoard / W&B /
MLflow log it. Import this module only where transformers is installed.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from logdoctor.emit.carry import Carried, take_carried, width_of
from logdoctor.emit.keys import FP_KEYS
from logdoctor.emit.recorder import BatchRecorder
from logdoctor.emit.session import EmitSession
from logdoctor.emit.stats import Pair, batch_stats

try:
    from transformers import TrainerCallback as _CallbackBase
except ImportError:  # pragma: no cover - exercised in environments without transformers
    _CallbackBase = object  # type: ignore[assignment,misc,unused-ignore]

_NO_FP = (
    "logdoctor.emit: training batches carry no dataset indices, so no batch_fp is written. "
    "Add an 'idx' feature (ds.map(lambda _, i: {'idx': i}, with_indices=True)), collate with "
    "RecordingCollator and set remove_unused_columns=False (the Trainer drops 'idx' otherwise)"
)

_LATE = (
    "logdoctor.emit: LogdoctorCallback was passed in Trainer(callbacks=[...]), so the Trainer runs it "
    "after its reporting integrations ({}), which log each step before the batch statistics are added "
    "(the JSONL and trainer_state.json still get them). Use LogdoctorCallback.attach(trainer, ...) "
    "instead, which puts it first"
)


class LogdoctorCallback(_CallbackBase):  # type: ignore[misc,unused-ignore]
    """Adds each logging interval's batch statistics to the training logs.

    Args:
        recorder: optional FIFO fed by a ``RecordingBatchSampler``, used for batches that carry
            no record (by default those are measured from their ``attention_mask``).
        jsonl: also write each training log as logdoctor JSONL here (rank 0), opened at train start.
    """

    def __init__(self, recorder: BatchRecorder | None = None, jsonl: str | Path | None = None) -> None:
        self.recorder = recorder
        self.session = EmitSession(jsonl)
        self.latest: dict[str, Any] = {}
        self.epoch = 0
        self._first_epoch = 0
        self._epochs_begun = 0
        self._attached = False
        self._hooked: set[int] = set()

    @classmethod
    def attach(
        cls, trainer: Any, recorder: BatchRecorder | None = None, jsonl: str | Path | None = None
    ) -> LogdoctorCallback:
        """Add a new callback to ``trainer`` ahead of the reporting integrations, so they log
        the statistics too; returns it."""
        callback = cls(recorder, jsonl)
        callback._attached = True
        trainer.callback_handler.callbacks.insert(0, callback)
        callback.hook(trainer.model)
        return callback

    def hook(self, model: Any) -> None:
        """Install the forward pre-hook that takes each training batch's record (once per model)."""
        if model is None or id(model) in self._hooked:
            return
        self._hooked.add(id(model))
        model.register_forward_pre_hook(self._pre_forward, with_kwargs=True)

    def _pre_forward(self, module: Any, args: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        carried = take_carried(kwargs)
        if module.training:
            torch = sys.modules.get("torch")
            grad = torch.is_grad_enabled() if torch is not None else True
            pair = self._pair(carried, kwargs) if grad else None
            if pair is not None:
                self.session.add(pair)
        return args, kwargs

    def _pair(self, carried: Carried | None, batch: dict[str, Any]) -> Pair | None:
        if carried is not None:
            if carried.indices is None:
                self.session.warn_once("fp", _NO_FP)
            return carried.pair(width_of(batch))
        if self.recorder is not None and len(self.recorder):
            return self.recorder.take(1)[0]
        self.session.warn_once("fp", _NO_FP)
        mask: Any = batch.get("attention_mask")
        ids: Any = batch.get("input_ids")
        if mask is None and ids is None:
            return None
        if mask is not None:
            lengths = [int(n) for n in mask.sum(-1).reshape(-1).tolist()]
        else:
            lengths = [int(ids.shape[-1])] * int(ids.reshape(-1, ids.shape[-1]).shape[0])
        return batch_stats(lengths, width_of(batch)), np.zeros(0, dtype=np.int64)

    def on_init_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> Any:
        self.hook(model)
        return control

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> Any:
        """Hook the model, open the JSONL (an earlier run's file moved aside unless resuming)."""
        self.hook(model)
        self.session.open(resuming=bool(state.global_step))
        self.epoch = self._first_epoch = math.floor(state.epoch or 0)
        self._epochs_begun = 0
        reporters = [r for r in (getattr(args, "report_to", None) or []) if r != "none"]
        if reporters and not self._attached:
            self.session.warn_once("order", _LATE.format(", ".join(map(str, reporters))))
        return control

    def on_epoch_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """The epoch index written with each line: epochs begun since train start, counted here
        (HF's ``epoch`` is progress, and on an IterableDataset it is measured in max_steps)."""
        self.epoch = self._first_epoch + self._epochs_begun
        self._epochs_begun += 1
        return control

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """Close the optimizer step: its micro-batches, on every rank."""
        self.session.end_step()
        return control

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        """Merge the interval's record into training logs (those with a ``loss``), never eval logs."""
        if logs is None or "loss" not in logs:
            return control
        self.latest = self.session.interval()
        if not self.latest:
            return control
        logs.update({k: v for k, v in self.latest.items() if k not in FP_KEYS})
        history = getattr(state, "log_history", None)
        if history and history[-1].get("step") == state.global_step and "loss" in history[-1]:
            history[-1].update(self.latest)
        metrics = {
            k: v
            for k, v in logs.items()
            if k not in ("loss", "epoch") and k not in self.latest and isinstance(v, int | float)
        }
        self.session.write(
            state.global_step,
            logs["loss"],
            total=state.max_steps or None,
            epoch=self.epoch,
            batch=self.latest,
            **metrics,
        )
        return control

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """Close the JSONL file."""
        self.session.close()
        return control
