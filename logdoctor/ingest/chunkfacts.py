"""What the chunks of a followed log state beyond their rows (totals, markers, aliases), merged."""

from __future__ import annotations

import dataclasses
from typing import Any

import polars as pl

from logdoctor.ingest.parsers import ParseResult
from logdoctor.ingest.parsers.markers import Markers
from logdoctor.model import LINE_NO, LogEvent

#: Marker fields that hold line numbers, and the one that holds (line, step) pairs.
_LINE_FIELDS = ("epoch_lines", "resume_lines", "run_headers")
#: ParseResult fields a chunk states once (the first chunk that states one decides).
_ONCE = ("total_steps", "steps_per_epoch", "planned_source")
_FLAGS = ("step_from_order", "steps_in_batches")
_UNIONS = ("notes", "keys_seen", "config_facts", "lossless_steps")


def shift_markers(m: Markers, pre: int, offset: int) -> Markers:
    """A chunk's markers in file lines: those of its preamble (lines <= ``pre``, read again with
    every chunk) dropped, the rest moved by ``offset``."""
    keep = [i for i, line in enumerate(m.epoch_lines) if line > pre]
    resumes = tuple((line + offset, step) for line, step in m.resume_steps if line > pre)
    return dataclasses.replace(
        m,
        epoch_lines=tuple(m.epoch_lines[i] + offset for i in keep),
        epoch_values=tuple(m.epoch_values[i] for i in keep if i < len(m.epoch_values)),
        resume_lines=tuple(line + offset for line in m.resume_lines if line > pre),
        run_headers=tuple(line + offset for line in m.run_headers if line > pre),
        resume_steps=resumes,
    )


def merge_markers(a: Markers, b: Markers) -> Markers:
    """``a`` (earlier chunks) followed by ``b`` (file lines already): line lists concatenated,
    stated values kept from the first chunk that states them."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Markers):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, tuple):
            out[f.name] = x + y
        elif isinstance(x, bool):
            out[f.name] = x or y
        else:
            out[f.name] = x if x is not None else y
    return Markers(**out)


@dataclasses.dataclass(slots=True)
class ChunkFacts:
    """The facts of every chunk read so far."""

    markers: Markers = dataclasses.field(default_factory=Markers)
    aliases: dict[str, str] = dataclasses.field(default_factory=dict)
    once: dict[str, Any] = dataclasses.field(default_factory=dict)
    unions: dict[str, tuple[Any, ...]] = dataclasses.field(default_factory=dict)
    events: tuple[LogEvent, ...] = ()
    #: step records without a loss (file lines), kept as the whole read keeps them
    lossless: list[pl.DataFrame] = dataclasses.field(default_factory=list)

    def add_events(self, events: tuple[LogEvent, ...], pre: int, offset: int) -> None:
        """Take in one chunk's failure events (those of its preamble dropped, moved by ``offset``)."""
        self.events += tuple(
            dataclasses.replace(e, line=e.line + offset, block_line=max(e.block_line, pre + 1) + offset)
            for e in events
            if e.line > pre
        )

    def add(self, result: ParseResult, pre: int, offset: int) -> None:
        """Take in one chunk's result (``pre`` preamble lines, ``offset`` to file lines)."""
        self.markers = merge_markers(self.markers, shift_markers(result.markers, pre, offset))
        self.aliases.update(result.aliases)
        self.add_events(result.events, pre, offset)
        rows = result.lossless_rows
        if rows.height and LINE_NO in rows.columns:
            self.lossless.append(rows.filter(pl.col(LINE_NO) > pre).with_columns(pl.col(LINE_NO) + offset))
        for name in _ONCE:
            if self.once.get(name) is None:
                self.once[name] = getattr(result, name)
        for name in _FLAGS:
            self.once[name] = bool(self.once.get(name)) or bool(getattr(result, name))
        for name in _UNIONS:
            have = self.unions.get(name, ())
            self.unions[name] = have + tuple(v for v in getattr(result, name) if v not in have)

    def result(self, table: pl.DataFrame, evals: pl.DataFrame, lines: int, skips: dict[str, int]) -> ParseResult:
        """A ParseResult of ``table`` (rows in file lines) that states what the chunks stated."""
        stated: dict[str, Any] = {**self.once, **self.unions}
        return ParseResult(
            table=table,
            evals=evals,
            lines_read=lines,
            skip_reasons=dict(skips),
            markers=self.markers,
            aliases=dict(self.aliases),
            events=self.events,
            lossless_rows=pl.concat(self.lossless, how="diagonal_relaxed") if self.lossless else pl.DataFrame(),
            **stated,
        )
