"""W&B run folders (``wandb/run-*``, ``wandb/offline-run-*``) and their ``.wandb`` transaction logs."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from logdoctor.errors import InputError, ParseError
from logdoctor.ingest import limits
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.configfacts import config_facts, epoch_length, planned_steps
from logdoctor.ingest.framechunks import FrameChunks
from logdoctor.ingest.namespaced import canonical_renames, dropped
from logdoctor.ingest.parsers.base import Parser, ParseResult
from logdoctor.ingest.parsers.records import normalize_records, resolve_key
from logdoctor.ingest.parsers.text import TextParser
from logdoctor.ingest.sources import Source, open_source
from logdoctor.model import BATCH_FP, CANONICAL_COLUMNS, LINE_NO, MICRO_FP

if TYPE_CHECKING:
    from logdoctor.ingest.wandb_records import WandbRecord

#: The first bytes of a ``.wandb`` transaction log (``wandb_records.MAGIC`` begins with them): only a
#: file that opens with them loads the record reader (a text log's sniff needs none, ~1.5 ms)
_HEADER = b":W&B"

_READ = 1 << 20


def is_wandb_run(path: Path) -> bool:
    """True for a W&B run folder: it holds a ``*.wandb`` transaction log."""
    return path.is_dir() and any(p.is_file() for p in path.glob("*.wandb"))


def transaction_log(source: Source) -> Path:
    """The ``.wandb`` file of a run folder (the newest when a resumed run left several) or the file."""
    if source.path is None:
        raise InputError(f"{source.name}: a W&B run must be read from a path")
    if not source.is_dir:
        return source.path
    logs = sorted(source.path.glob("*.wandb"), key=lambda p: p.stat().st_mtime)
    if not logs:
        raise InputError(f"{source.name}: no .wandb file in this W&B run folder")
    return logs[-1]


def read_records(
    path: Path,
    name: str,
    history: Callable[[WandbRecord], None] | None = None,
) -> tuple[list[WandbRecord], int]:
    """(history, config and output records in file order, chunks that failed their checksum).

    With ``history``, history records go to it as they are read instead of into the list.
    """
    from logdoctor.ingest.wandb_records import RecordReader, decode

    reader = RecordReader(name)
    out: list[WandbRecord] = []
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(_READ):
                for rec in map(decode, reader.feed(chunk)):
                    if rec is None:
                        continue
                    if history is not None and rec.kind == "history":
                        history(rec)
                    else:
                        out.append(rec)
    except OSError as err:
        raise InputError(f"{name}: cannot read ({err.strerror or err})") from None
    return out, reader.corrupt


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _fingerprint(value: Any) -> str | None:
    """A batch fingerprint as text, whatever type it was logged as: a hex digest string, an integer
    hash (kept exact, never through a float), or a list of micro-batch fingerprints (joined by ``+``
    as in text logs)."""
    if value is None or isinstance(value, bool | dict):
        return None
    if isinstance(value, list):
        parts = [p for p in map(_fingerprint, value) if p is not None]
        return "+".join(parts) or None
    return str(value)


class HistoryRows:
    """History records as rows (numbers as floats, batch fingerprints as text; ``_step`` from the
    record's step when the row has none), gathered into frames a chunk at a time."""

    def __init__(self, fields: FieldMap, chunk: int | None = None) -> None:
        self._fields = fields
        self._text: dict[str, bool] = {}
        canonical = lambda k: resolve_key(k, fields) in CANONICAL_COLUMNS  # noqa: E731 - the budget's rule
        self.chunks = FrameChunks(strict=True, chunk=chunk, budget=limits.KeyBudget(canonical))

    def add(self, rec: WandbRecord) -> None:
        """One record; only history records make rows."""
        if rec.kind == "history":
            self.chunks.add(self._row(rec))

    def _row(self, rec: WandbRecord) -> dict[str, float | str | None]:
        row: dict[str, float | str | None] = {}
        for k, v in rec.items.items():
            is_fp = self._text.setdefault(k, resolve_key(k, self._fields) in (BATCH_FP, MICRO_FP))
            row[k] = _fingerprint(v) if is_fp else _number(v)
        if "_step" not in row and rec.step is not None:
            row["_step"] = float(rec.step)
        return row

    def frame(self) -> pl.DataFrame | None:
        """One row per history record (``line_no`` = its ordinal), keys renamed; None when the
        chunks would not combine to the frame of all rows at once (framechunks)."""
        frame = self.chunks.frame()
        if frame is None or frame.height == 0:
            return frame
        frame = frame.with_row_index(LINE_NO, offset=1).with_columns(pl.col(LINE_NO).cast(pl.Int64))
        renames = canonical_renames(frame.columns, self._fields)
        return frame.drop(dropped(frame.columns, renames)).rename(renames)


def _read_history(log: Path, name: str, fields: FieldMap) -> tuple[list[WandbRecord], int, pl.DataFrame, str | None]:
    """(the other records, corrupt chunks, the history frame, the key budget's notice or None):
    history rows are never held whole
    as dicts. Read again as one chunk if the chunks' column types would not combine to the frame of
    all rows at once (not seen: each key's values are all numbers or all text)."""
    rows = HistoryRows(fields)
    records, corrupt = read_records(log, name, rows.add)
    frame = rows.frame()
    if frame is None:
        rows = HistoryRows(fields, chunk=sys.maxsize)
        records, corrupt = read_records(log, name, rows.add)
        frame = rows.frame()
    if frame is None:
        raise ParseError(f"{name}: history values of mixed types")
    return records, corrupt, frame, rows.chunks.budget.note if rows.chunks.budget else None


def merged_config(records: list[WandbRecord]) -> dict[str, Any]:
    """The run config: the run record's, updated by every later config record."""
    config: dict[str, Any] = {}
    for rec in records:
        if rec.kind == "config":
            config.update({k: v for k, v in rec.items.items() if not k.startswith("_")})
    return config


def _output_log(source: Source, log: Path, fields: FieldMap) -> ParseResult:
    """The run's console output (``files/output.log``) read as a text log."""
    out = log.parent / "files" / "output.log"
    result = TextParser().parse(open_source(str(out)), fields)
    note = "W&B history holds no training loss: read the console output files/output.log"
    return dataclasses.replace(result, notes=(*result.notes, note))


class WandbParser(Parser):
    """History rows by record; ``train/epoch`` and ``train/global_step`` are the counters; the
    run config's facts (epochs, batch size, accumulation, length grouping, schedule) come along."""

    name = "wandb"
    description = "W&B run folder (wandb/run-*, offline-run-*) or its .wandb file; no package needed"

    def sniff(self, source: Source) -> bool:
        if source.is_dir:
            return source.path is not None and is_wandb_run(source.path)
        head = source.head_bytes(8)
        if source.compression is not None or not head.startswith(_HEADER):
            return False
        from logdoctor.ingest.wandb_records import is_wandb_log

        return is_wandb_log(head)

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        log = transaction_log(source)
        records, corrupt, frame, budget = _read_history(log, source.name, fields)
        facts = config_facts(merged_config(records), "wandb config")
        if not records and not frame.height and corrupt:
            raise ParseError(f"{source.name}: damaged .wandb file ({corrupt} chunk(s) failed their checksum)")
        try:
            if frame.height == 0:
                raise ParseError(f"{source.name}: the W&B run logged no history")
            result = normalize_records(frame, fields, source.name, frame.height)
        except ParseError:
            if not (log.parent / "files" / "output.log").is_file():
                raise
            result = _output_log(source, log, fields)
        notes = [f"W&B transaction log {log.name}: {frame.height} history records"] + ([budget] if budget else [])
        finished = any(r.kind == "exit" and r.items.get("exit_code") == 0 for r in records)
        spe, spe_note = (None, "") if result.steps_per_epoch else epoch_length(facts, result.table, finished)
        notes += [spe_note] if spe else []
        if corrupt:
            notes.append(f"{corrupt} chunk(s) failed their checksum and were skipped")
        return dataclasses.replace(
            result,
            notes=(*result.notes, *notes),
            config_facts=facts,
            total_steps=result.total_steps or planned_steps(facts),
            steps_per_epoch=result.steps_per_epoch or spe,
        )
