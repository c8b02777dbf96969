"""Drop-in helpers so a training pipeline logs what logdoctor needs (no framework imported)."""

from __future__ import annotations

from logdoctor.emit.lines import JsonlWriter, format_line
from logdoctor.emit.recorder import BatchRecorder
from logdoctor.emit.stats import BATCH_KEYS, batch_fingerprint, batch_stats

__all__ = ["BATCH_KEYS", "BatchRecorder", "JsonlWriter", "batch_fingerprint", "batch_stats",
           "format_line"]
