"""Drop-in helpers so a training pipeline logs what logdoctor needs (no framework imported).

The names below load on first use, so ``from logdoctor.emit.lines import format_line`` needs
neither numpy nor anything else outside the standard library.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_HOMES = {
    "BATCH_KEYS": "logdoctor.emit.keys",
    "JsonlWriter": "logdoctor.emit.lines",
    "format_line": "logdoctor.emit.lines",
    "BatchRecorder": "logdoctor.emit.recorder",
    "batch_fingerprint": "logdoctor.emit.stats",
    "batch_stats": "logdoctor.emit.stats",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is asked for."""
    if name not in _HOMES:
        raise AttributeError(f"module 'logdoctor.emit' has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)
