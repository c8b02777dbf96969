"""W&B run folders (``wandb/run-*``, ``wandb/offline-run-*``) and their ``.wandb`` transaction logs."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import polars as pl

from logdoctor.errors import InputError, ParseError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.configfacts import config_facts, epoch_length, planned_steps
from logdoctor.ingest.namespaced import canonical_renames, dropped
from logdoctor.ingest.parsers.base import Parser, ParseResult
from logdoctor.ingest.parsers.records import normalize_records, resolve_key
from logdoctor.ingest.parsers.text import TextParser
from logdoctor.ingest.sources import Source, open_source
from logdoctor.ingest.wandb_records import RecordReader, WandbRecord, decode, is_wandb_log
from logdoctor.model import BATCH_FP, LINE_NO, MICRO_FP

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


def read_records(path: Path, name: str) -> tuple[list[WandbRecord], int]:
    """(history, config and output records in file order, chunks that failed their checksum)."""
    reader = RecordReader(name)
    out: list[WandbRecord] = []
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(_READ):
                out += [r for r in map(decode, reader.feed(chunk)) if r is not None]
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


def history_frame(records: list[WandbRecord], fields: FieldMap) -> pl.DataFrame:
    """One row per history record (``line_no`` = its ordinal), keys renamed; numeric values only,
    but batch fingerprints (which may be strings) as text."""
    rows: list[dict[str, float | str | None]] = []
    text: dict[str, bool] = {}
    for rec in records:
        if rec.kind == "history":
            row: dict[str, float | str | None] = {}
            for k, v in rec.items.items():
                is_fp = text.setdefault(k, resolve_key(k, fields) in (BATCH_FP, MICRO_FP))
                row[k] = _fingerprint(v) if is_fp else _number(v)
            if "_step" not in row and rec.step is not None:
                row["_step"] = float(rec.step)
            rows.append(row)
    if not rows:
        return pl.DataFrame()
    frame = pl.from_dicts(rows, infer_schema_length=None).with_row_index(LINE_NO, offset=1)
    frame = frame.with_columns(pl.col(LINE_NO).cast(pl.Int64))
    renames = canonical_renames(frame.columns, fields)
    return frame.drop(dropped(frame.columns, renames)).rename(renames)


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
        return source.compression is None and is_wandb_log(source.head_bytes(8))

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        log = transaction_log(source)
        records, corrupt = read_records(log, source.name)
        facts = config_facts(merged_config(records), "wandb config")
        frame = history_frame(records, fields)
        if not records and corrupt:
            raise ParseError(f"{source.name}: damaged .wandb file ({corrupt} chunk(s) failed their checksum)")
        try:
            if frame.height == 0:
                raise ParseError(f"{source.name}: the W&B run logged no history")
            result = normalize_records(frame, fields, source.name, frame.height)
        except ParseError:
            if not (log.parent / "files" / "output.log").is_file():
                raise
            result = _output_log(source, log, fields)
        notes = [f"W&B transaction log {log.name}: {frame.height} history records"]
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
