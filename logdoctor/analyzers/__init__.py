"""The ordered registry of detectors run by ``pipeline.analyze``."""

from __future__ import annotations

from logdoctor.analyzers.base import Analyzer, Detection
from logdoctor.analyzers.integrity import IntegrityDetector

#: Detector classes, instantiated by the pipeline with the user's thresholds for each name.
ANALYZERS: tuple[type[Analyzer], ...] = (IntegrityDetector,)

__all__ = ["ANALYZERS", "Analyzer", "Detection"]
