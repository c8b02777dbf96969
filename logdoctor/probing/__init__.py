"""The sampler probe: walk a training pipeline's sampler (batch indices only) into a Run, a source of
runs beside ingest's, and diagnose it as any log is diagnosed.

``probe`` and ``assert_sampler_ok`` load on first use (``logdoctor.probing.api``), so importing the
package imports neither torch nor the analysis.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["assert_sampler_ok", "probe"]


def __getattr__(name: str) -> Any:
    """``probe`` and ``assert_sampler_ok`` from ``logdoctor.probing.api``, the first time they are asked for."""
    if name not in __all__:
        raise AttributeError(f"module 'logdoctor.probing' has no attribute {name!r}")
    return getattr(import_module("logdoctor.probing.api"), name)
