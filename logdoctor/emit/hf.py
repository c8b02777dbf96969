"""Hugging Face Trainer: a callback that adds batch statistics and the fingerprint to each log.

Usage::

    rec = BatchRecorder(lengths)             # fed by RecordingBatchSampler or RecordingCollator
    trainer = Trainer(..., callbacks=[LogdoctorCallback(rec, jsonl="logdoctor.jsonl")])

Each optimizer step pops its micro-batches' records (``gradient_accumulation_steps`` of them);
each training log (every ``logging_steps``; use 1 for fingerprints to be useful) gets the last
step's ``n_seq tokens len_mean len_min len_max pad_frac batch_fp``: in the ``logs`` dict that later
callbacks print, in ``state.log_history``, and as a line of ``jsonl`` when given.
Import this module only where transformers is installed; ``logdoctor.emit`` never imports it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logdoctor.emit.lines import JsonlWriter
from logdoctor.emit.recorder import BatchRecorder

try:
    from transformers import TrainerCallback as _CallbackBase
except ImportError:  # pragma: no cover - exercised in environments without transformers
    _CallbackBase = object  # type: ignore[assignment,misc,unused-ignore]


class LogdoctorCallback(_CallbackBase):  # type: ignore[misc,unused-ignore]
    """Adds the last step's batch record to every training log.

    Args:
        recorder: the recorder the data loader feeds.
        jsonl: also write each training log as logdoctor JSONL here (step, loss, metrics, batch).
    """

    def __init__(self, recorder: BatchRecorder, jsonl: str | Path | None = None) -> None:
        self.recorder = recorder
        self.latest: dict[str, Any] = {}
        self._writer = JsonlWriter(jsonl) if jsonl is not None else None

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """Take this optimizer step's micro-batches from the recorder."""
        accumulation = int(getattr(args, "gradient_accumulation_steps", 1))
        self.latest = self.recorder.pop(max(1, accumulation))
        return control

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
               **kwargs: Any) -> Any:
        """Merge the record into training logs (those with a ``loss``), never into eval logs."""
        if logs is None or "loss" not in logs or not self.latest:
            return control
        logs.update(self.latest)
        history = getattr(state, "log_history", None)
        if history and history[-1].get("step") == state.global_step and "loss" in history[-1]:
            history[-1].update(self.latest)
        if self._writer is not None:
            metrics = {k: v for k, v in logs.items()
                       if k != "loss" and k not in self.latest and isinstance(v, int | float)}
            self._writer.write(state.global_step, logs["loss"], total=state.max_steps or None,
                               batch=self.latest, **metrics)
        return control

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        """Close the JSONL file."""
        if self._writer is not None:
            self._writer.close()
        return control
