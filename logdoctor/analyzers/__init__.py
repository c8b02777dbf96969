"""The ordered registry of detectors run by ``pipeline.analyze``."""

from __future__ import annotations

from logdoctor.analyzers.base import Analyzer, Detection
from logdoctor.analyzers.changepoints import ChangepointDetector
from logdoctor.analyzers.drops import DropDetector
from logdoctor.analyzers.integrity import IntegrityDetector
from logdoctor.analyzers.nonfinite import DivergenceDetector, NonFiniteDetector
from logdoctor.analyzers.periodicity import PeriodicityDetector
from logdoctor.analyzers.spikes import SpikeDetector
from logdoctor.analyzers.tooshort import TooShortDetector

#: Detector classes, instantiated by the pipeline with the user's thresholds for each name.
ANALYZERS: tuple[type[Analyzer], ...] = (
    IntegrityDetector,
    TooShortDetector,
    NonFiniteDetector,
    DivergenceDetector,
    SpikeDetector,
    PeriodicityDetector,
    ChangepointDetector,
    DropDetector,
)

__all__ = ["ANALYZERS", "Analyzer", "Detection"]
