"""The detector interface: a pure ``analyze(run) -> Detection`` with explicit keyword thresholds."""

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
    """

    findings: tuple[Finding, ...] = ()
    artifacts: Mapping[str, object] = field(default_factory=dict)


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
