"""PyTorch Lightning: a callback logging batch statistics each step (fingerprint: to JSONL).

Usage::

    loader = DataLoader(ds, batch_sampler=RecordingBatchSampler(batch_sampler, lengths))
    trainer = Trainer(callbacks=[LogdoctorCallback(loader.batch_sampler.recorder,
                                                   jsonl="logdoctor.jsonl")])

Lightning loggers take numbers only, so the numeric statistics go through ``pl_module.log_dict``
(to whatever logger is configured) and the string ``batch_fp`` with the loss and the statistics
to ``jsonl``. Import this module only where lightning is installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logdoctor.emit.lines import JsonlWriter
from logdoctor.emit.recorder import BatchRecorder

try:
    from lightning.pytorch import Callback as _CallbackBase
except ImportError:  # pragma: no cover
    try:
        from pytorch_lightning import Callback as _CallbackBase  # type: ignore[assignment,unused-ignore]
    except ImportError:
        _CallbackBase = object  # type: ignore[assignment,misc,unused-ignore]


def _loss_of(outputs: Any) -> float | None:
    loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
    if loss is None:
        return None
    return float(loss.item() if hasattr(loss, "item") else loss)


class LogdoctorCallback(_CallbackBase):  # type: ignore[misc,unused-ignore]
    """Logs each training batch's statistics; writes the full record to ``jsonl`` when given."""

    def __init__(self, recorder: BatchRecorder, jsonl: str | Path | None = None) -> None:
        self.recorder = recorder
        self.latest: dict[str, Any] = {}
        self._writer = JsonlWriter(jsonl) if jsonl is not None else None

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        """Pop this micro-batch's record, log its numbers, append the JSONL line."""
        self.latest = self.recorder.pop(1)
        if not self.latest:
            return
        numbers = {k: float(v) for k, v in self.latest.items() if k != "batch_fp"}
        pl_module.log_dict(numbers, on_step=True, on_epoch=False, batch_size=int(numbers["n_seq"]))
        loss = _loss_of(outputs)
        if self._writer is not None and loss is not None:
            self._writer.write(int(trainer.global_step), loss, epoch=int(trainer.current_epoch),
                               batch=self.latest)

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        """Close the JSONL file."""
        if self._writer is not None:
            self._writer.close()
