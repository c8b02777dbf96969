"""MLflow file store: a run folder's ``metrics/<name>`` files of ``timestamp value step`` lines."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import polars as pl

from logdoctor.errors import ParseError
from logdoctor.ingest import limits
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers.base import Parser, ParseResult
from logdoctor.ingest.parsers.records import normalize_records, resolve_key
from logdoctor.ingest.sources import Source
from logdoctor.model import CANONICAL_COLUMNS as CANONICAL
from logdoctor.model import LINE_NO, LOSS, STEP

_LINE = re.compile(r"^\d+ \S+ -?\d+\s*$")


def metrics_dir(root: Path) -> Path | None:
    """The ``metrics`` folder of a run folder, or the input itself when it is that folder."""
    for cand in (root / "metrics", *((root,) if root.name == "metrics" else ())):
        if not cand.is_dir():
            continue
        files = metric_files(cand)
        if files:
            with files[0].open("rb") as fh:
                first = fh.readline(256).decode("utf-8", errors="replace")
            if _LINE.match(first):
                return cand
    return None


def metric_files(folder: Path) -> list[Path]:
    """Metric files below ``folder`` (metric names may hold ``/``, i.e. sub-folders); at most
    ``limits.MAX_KEYS`` of them are read (``_kept``), but all are counted."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))


def _read_metric(path: Path, key: str) -> pl.DataFrame:
    with path.open("rb") as fh:  # bytes: polars opens no path whose name is not UTF-8
        data = fh.read()
    frame = pl.read_csv(
        data,
        separator=" ",
        has_header=False,
        new_columns=["ts", "value", STEP],
        schema_overrides={"ts": pl.Int64, "value": pl.String, STEP: pl.Int64},
        truncate_ragged_lines=True,
    )
    return frame.with_row_index(LINE_NO, offset=1).with_columns(
        pl.lit(key).alias("key"),
        pl.col("value").str.to_lowercase().str.replace(r"^([-+]?)infinity$", "${1}inf").cast(pl.Float64, strict=False),
        pl.col(LINE_NO).cast(pl.Int64),
    )


class MlflowParser(Parser):
    """Each metric file is a series; the loss file fixes the record order (``line_no`` is its line),
    and the other metrics join it by step (their last value at that step)."""

    name = "mlflow"
    description = "MLflow file store run folder (metrics/<name>: timestamp value step)"

    def sniff(self, source: Source) -> bool:
        return source.is_dir and source.path is not None and metrics_dir(source.path) is not None

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        folder = metrics_dir(source.path) if source.path is not None else None
        if folder is None:
            raise ParseError(f"{source.name}: no MLflow metrics folder")
        files, note = _kept(folder, fields)
        try:
            series = [_read_metric(p, _key(p, folder)) for p in files]
        except OSError as err:
            raise ParseError(f"{source.name}: unreadable MLflow metric file ({err.strerror or err})") from None
        except pl.exceptions.PolarsError as err:
            raise ParseError(f"{source.name}: unreadable MLflow metric file ({err})") from None
        keys = [s["key"][0] for s in series if s.height]
        loss_keys = [k for k in keys if resolve_key(k, fields) == LOSS]
        if not loss_keys:
            raise ParseError(f"{source.name}: no training-loss metric (metrics: {', '.join(keys)})")
        spine_key = sorted(loss_keys, key=lambda k: (k != LOSS, k))[0]
        spine = next(s for s in series if s.height and s["key"][0] == spine_key)
        frame = spine.select(LINE_NO, STEP, pl.col("value").alias(spine_key))
        for s in series:
            if not s.height or s["key"][0] == spine_key:
                continue
            k = s["key"][0]
            last = s.group_by(STEP).agg(pl.col("value").sort_by(LINE_NO).last().alias(k))
            frame = frame.join(last, on=STEP, how="full", coalesce=True)
        frame = frame.sort(LINE_NO, nulls_last=True)
        n_lines = sum(s.height for s in series)
        # metric steps that the loss never logged get line numbers after the loss lines
        frame = frame.with_columns(
            pl.col(LINE_NO).fill_null(pl.int_range(1, pl.len() + 1, dtype=pl.Int64) + spine.height)
        )
        result = normalize_records(frame, fields, source.name, n_lines)
        return dataclasses.replace(result, notes=(*result.notes, note)) if note else result


def _key(path: Path, folder: Path) -> str:
    """The metric name of a metric file (a name that is not UTF-8 shown with U+FFFD)."""
    return limits.clean_text(path.relative_to(folder).as_posix())


def _kept(folder: Path, fields: FieldMap) -> tuple[list[Path], str | None]:
    """The metric files read (at most ``limits.MAX_KEYS``: the canonical ones, then the longest)
    and the notice when some were left."""
    files = metric_files(folder)
    sizes: dict[str, int] = {}
    by_key: dict[str, Path] = {}
    for p in files:
        key = _key(p, folder)
        by_key[key] = p
        try:
            sizes[key] = p.stat().st_size
        except OSError:
            sizes[key] = 0
    always = {k for k in sizes if resolve_key(k, fields) in CANONICAL}
    kept, note = limits.keep_keys(sizes, always)
    return [p for k, p in by_key.items() if k in kept], note
