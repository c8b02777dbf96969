"""The parser interface: sniff a Source, parse it into a raw step table (ParseResult)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import polars as pl

from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.sources import Source
from logdoctor.model import ConfigFact


@dataclass(frozen=True, slots=True)
class ParseResult:
    """What a parser read, before run structure (resumes, duplicates) is resolved.

    Attributes:
        table: training-step rows in file order, with canonical column names (``step``,
            ``loss``, ``line_no`` required; other canonical and extra numeric columns as found).
            Steps may repeat or go backwards: ``structure.build_run`` resolves that.
        evals: evaluation rows (``step`` nullable, ``line_no``, metric columns); may be empty.
        lines_read: physical lines (or records) read.
        skip_reasons: counts of lines that held no training step, by reason.
        total_steps: planned total steps when the log states it.
        steps_per_epoch: steps per epoch when the log states it.
        aliases: source key -> canonical column for every renamed field.
        notes: remarks for the user.
        config_facts: what the run's configuration states (W&B config, MLflow params).
    """

    table: pl.DataFrame
    evals: pl.DataFrame = field(default_factory=pl.DataFrame)
    lines_read: int = 0
    skip_reasons: Mapping[str, int] = field(default_factory=dict)
    total_steps: int | None = None
    steps_per_epoch: int | None = None
    aliases: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    config_facts: tuple[ConfigFact, ...] = ()

    @property
    def lines_skipped(self) -> int:
        """Total lines that held no training step."""
        return sum(self.skip_reasons.values())


class Parser(ABC):
    """One log format. Subclasses set ``name`` and ``description`` and implement both methods."""

    name: ClassVar[str]
    description: ClassVar[str]

    @abstractmethod
    def sniff(self, source: Source) -> bool:
        """Return True when this parser recognises the content (not the file name)."""

    @abstractmethod
    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        """Read the source into a ParseResult.

        Raises:
            ParseError: when the content is this format but holds no training steps.
        """
