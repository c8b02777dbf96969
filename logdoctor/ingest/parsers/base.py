"""The parser interface: sniff a Source, parse it into a raw step table (ParseResult)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import polars as pl

from logdoctor.errors import ConfigError, ParseError
from logdoctor.ingest.aliases import FieldMap, normalize_key
from logdoctor.ingest.parsers.markers import Markers
from logdoctor.ingest.sources import Source
from logdoctor.model import ConfigFact, LogEvent, StuckCounter

#: Optional ``ParseResult.table`` column: non-zero on the first step record after a restart, which
#: structure/ reads as "a resume starts here": 1 after a restart marker line (text.py).
RESTART = "restart"
#: Its value on a row whose own counter went back with no marker line (a log counted by its epoch
#: alone, recordorder.py): always a restart, named from the counter like any other.
COUNTER_BACK = 2.0


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
        markers: epoch, resume and run-header lines of a text log (structure/ reads them).
        step_from_order: True when the log prints no step and rows were numbered 1, 2, ...
        planned_source: where ``total_steps`` was read (``column``, ``header``, ``progress_bar``,
            ``config``), when the parser knows.
        keys_seen: the field names the log holds (for ``--map`` errors); empty when unknown.
        steps_in_batches: the step column counts batches, not optimizer updates (Sockeye
            ``B=``): structure/ divides it by the gradient accumulation the log states.
        lossless_steps: steps of step lines that carry no loss (Megatron's iteration whose every
            batch was skipped): counted in the structure's rows, never analysed.
        lossless_rows: those records with every value they hold (``step``, ``line_no``, counters
            and scales such as ``loss_scale``), line order: counters are read from them too.
        config_facts: what the run's configuration states (W&B config, MLflow params).
        events: every failure event the log prints (ingest/parsers/events.py: CUDA OOM, NCCL
            timeouts, tracebacks, recovered OOMs, early stopping...), file order; structure/ gives
            each run the events written on its lines, and the failure after its last training row.
        stuck_counters: the stuck step counters found on the records one by one while a log was
            streamed and reduced (its table no longer holds them in file order); None when the
            structure stage finds them in the table itself.
        snapshot: the file is a state saved during training (a checkpoint's ``trainer_state.json``
            without the summary the trainer writes when its loop ends): it says nothing of what came after.
        first_epoch: the epoch that steps derived from a progress bar's epoch and count (no step
            printed: ``step = (epoch - first_epoch) x batches_total + batches``) count from, one
            for the whole log; None when no step was derived. A reader of a growing log in chunks
            hands it to the next chunk's parse (ingest/chunks.py).
        refusal: set on a result without a training row whose log prints a failure (the run died
            before its first logged step): the message a reader that needs rows refuses it with;
            ``pipeline.load`` reports the failure instead (structure/beforefirst.py).
    """

    table: pl.DataFrame
    evals: pl.DataFrame = field(default_factory=pl.DataFrame)
    lines_read: int = 0
    #: records after splitting lines at lone ``\r`` (tqdm redraws); 0 when no line was split
    records_read: int = 0
    skip_reasons: Mapping[str, int] = field(default_factory=dict)
    total_steps: int | None = None
    steps_per_epoch: int | None = None
    aliases: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    markers: Markers = field(default_factory=Markers)
    step_from_order: bool = False
    planned_source: str | None = None
    keys_seen: tuple[str, ...] = ()
    steps_in_batches: bool = False
    lossless_steps: tuple[int, ...] = ()
    lossless_rows: pl.DataFrame = field(default_factory=pl.DataFrame)
    config_facts: tuple[ConfigFact, ...] = ()
    events: tuple[LogEvent, ...] = ()
    snapshot: bool = False
    stuck_counters: tuple[StuckCounter, ...] | None = None
    refusal: str | None = None
    first_epoch: int | None = None

    @property
    def lines_skipped(self) -> int:
        """Total lines that held no training step."""
        return sum(self.skip_reasons.values())


def require_rows(result: ParseResult) -> ParseResult:
    """``result`` when it holds training rows, or is no refusal.

    Raises:
        ParseError: the result holds no row and a refusal (a run that died before its first step),
            for a reader that needs rows (a chunk of a long log, a followed log).
    """
    if result.refusal is not None and result.table.height == 0:
        raise ParseError(result.refusal)
    return result


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


def check_overrides(result: ParseResult, fields: FieldMap, name: str) -> None:
    """Raise ConfigError when a ``--map`` source field is not in the log, listing the keys seen.

    Only checked when the parser reports the keys it saw, and not for a configuration file's map,
    which is shared by logs of several formats.
    """
    if not fields.overrides or fields.shared or not result.keys_seen:
        return
    seen = {normalize_key(k) for k in (*result.keys_seen, *result.aliases)}
    missing = [f"{c}={s}" for c, s in fields.overrides.items() if normalize_key(s) not in seen]
    if missing:
        keys = ", ".join(sorted(set(result.keys_seen)))
        raise ConfigError(f"{name}: --map {', '.join(missing)}: no such field (keys seen: {keys})")
