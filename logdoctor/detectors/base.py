"""The detector interface: a pure ``analyze(run) -> Detection`` with explicit keyword thresholds,
and the reasons a detector gives when it cannot run (``Detection.skipped``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from logdoctor.model import Finding, Run
from logdoctor.options import Option


@dataclass(frozen=True, slots=True)
class Detection:
    """What one detector produced.

    Attributes:
        findings: the findings, each with its evidence.
        artifacts: values for ``model.Artifacts`` fields (e.g. ``{"spike_steps": (...)}``) that
            renderers may draw; keys must be Artifacts field names.
        skipped: why the check could not run on this run (one of the reasons below), or "" when it
            ran: the report's list of checks (``model.Check``) is made of these, so that "no
            problems found" says among which checks.
    """

    findings: tuple[Finding, ...] = ()
    artifacts: Mapping[str, object] = field(default_factory=dict)
    skipped: str = ""


#: Why a check could not run: the data it needs is not in the log, or too little of it.
TOO_FEW_ROWS = "too few rows"
#: the run died before its first logged step: the log holds its failure and nothing else to judge
NO_ROWS = "no training row"
NO_EVAL = "no eval metric"
TOO_FEW_EVALS = "too few evals"
#: evaluations are logged, but none is a score with a direction (accuracy, mAP, BLEU...) over enough points
NO_EVAL_SCORE = "no eval score"
NO_LR = "no lr"
NO_STEP_TIMES = "no step times"
NO_GRAD_NORM = "no grad norm"
#: the mixed-precision checks (skipped steps, loss scale, fp16 overflows) share one reason
NO_SCALER = "no loss-scale data"
NO_STRUCTURE = "no run structure"
NO_CHANCE_LEVEL = "one output: no chance level"
NOT_POSITIVE = "loss not always positive"
NO_BATCH_STATS = "no batch statistics"
UNUSABLE_LENGTHS = "no usable batch lengths"


class Analyzer(ABC):
    """A detector. Thresholds are explicit keyword arguments of ``__init__`` with defaults;
    ``analyze`` is pure (same run, same Detection) and never raises on thin data: it returns
    no finding, or an LD006 "too-short" info finding, instead.
    """

    name: ClassVar[str]
    #: the keyword thresholds of ``__init__``, each with its type and bounds (none by default)
    options: ClassVar[tuple[Option, ...]] = ()

    @abstractmethod
    def analyze(self, run: Run) -> Detection:
        """Examine the run and return findings with evidence."""
