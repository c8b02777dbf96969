"""The ordered registry of detectors run by ``pipeline.analyze``."""

from __future__ import annotations

from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.detectors.chance import ChanceLossDetector
from logdoctor.detectors.changepoints import ChangepointDetector
from logdoctor.detectors.constantloss import ConstantLossDetector
from logdoctor.detectors.divergence import DivergenceDetector
from logdoctor.detectors.drops import DropDetector
from logdoctor.detectors.ending import EndingDetector
from logdoctor.detectors.evalmetrics import EvalMetricDetector
from logdoctor.detectors.evalnoise import EvalNoiseDetector
from logdoctor.detectors.evalnonfinite import EvalNonFiniteDetector
from logdoctor.detectors.failures import FailureEventDetector
from logdoctor.detectors.fp16overflows import Fp16OverflowDetector
from logdoctor.detectors.integrity import IntegrityDetector
from logdoctor.detectors.lossfloor import LossFloorDetector
from logdoctor.detectors.lrschedule import LrScheduleDetector
from logdoctor.detectors.memorization import MemorizationDetector
from logdoctor.detectors.mixedprecision import MixedPrecisionDetector
from logdoctor.detectors.nonfinite import NonFiniteDetector
from logdoctor.detectors.nonfinitemetrics import NonFiniteMetricsDetector
from logdoctor.detectors.overfitting import OverfittingDetector
from logdoctor.detectors.periodicity import PeriodicityDetector
from logdoctor.detectors.slowdown import SlowdownDetector
from logdoctor.detectors.spikes import SpikeDetector
from logdoctor.detectors.tooshort import TooShortDetector
from logdoctor.detectors.zeroloss import ZeroLossDetector

#: Detector classes, instantiated by the pipeline with the user's thresholds for each name.
ANALYZERS: tuple[type[Analyzer], ...] = (
    IntegrityDetector,
    TooShortDetector,
    EndingDetector,
    FailureEventDetector,
    NonFiniteDetector,
    ZeroLossDetector,
    ConstantLossDetector,
    NonFiniteMetricsDetector,
    DivergenceDetector,
    SpikeDetector,
    PeriodicityDetector,
    ChangepointDetector,
    DropDetector,
    LrScheduleDetector,
    SlowdownDetector,
    EvalNoiseDetector,
    EvalNonFiniteDetector,
    LossFloorDetector,
    ChanceLossDetector,
    OverfittingDetector,
    MemorizationDetector,
    EvalMetricDetector,
    MixedPrecisionDetector,
    Fp16OverflowDetector,
)

__all__ = ["ANALYZERS", "Analyzer", "Detection"]
