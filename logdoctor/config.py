"""Analysis configuration: thresholds per detector, rule selection, field map, epoch length."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from logdoctor.ingest.aliases import FieldMap
from logdoctor.model import Severity


@dataclass(frozen=True, slots=True)
class AnalysisConfig:
    """Everything that tunes ingest and analysis.

    Attributes:
        fields: source-field overrides (``--map``).
        steps_per_epoch: overrides what the log states or ingest infers.
        stride: optimizer steps per row of a log whose rows carry no step (``--stride``).
        options: detector name -> keyword thresholds for that detector's ``__init__``.
        select / ignore: codes, code prefixes or rule names to keep / drop.
        fail_on: the severity at or above which ``check`` fails.
        runs: ``all`` (``check`` gates on every run appended to a log) or ``last`` (the last run only).
        max_memory: memory budget of ingest in bytes (``--max-memory``); None: see memory.budget.
    """

    fields: FieldMap = field(default_factory=FieldMap)
    steps_per_epoch: int | None = None
    options: Mapping[str, Mapping[str, float | int | str | bool]] = field(default_factory=dict)
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: Severity = Severity.WARNING
    runs: str = "all"
    max_memory: int | None = None
    stride: int | None = None

    def options_for(self, name: str) -> Mapping[str, float | int | str | bool]:
        """Keyword thresholds configured for the detector called ``name``."""
        return self.options.get(name, {})
