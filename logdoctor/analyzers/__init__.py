"""The ordered registry of detectors run by ``pipeline.analyze``."""

from __future__ import annotations

from logdoctor.analyzers.base import Analyzer, Detection

#: Detector classes, instantiated by the pipeline with the user's thresholds for each name.
ANALYZERS: tuple[type[Analyzer], ...] = ()

__all__ = ["ANALYZERS", "Analyzer", "Detection"]
