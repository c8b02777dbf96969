"""TensorBoard event files (``events.out.tfevents.*``) via tensorboard's reader (an extra)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import polars as pl

from logdoctor import vocab
from logdoctor.errors import InputError, ParseError
from logdoctor.ingest.aliases import FieldMap, normalize_key
from logdoctor.ingest.limits import MAX_EVENT_FILES, MAX_RUNS, within
from logdoctor.ingest.namespaced import canonical_renames
from logdoctor.ingest.parsers.base import Parser, ParseResult
from logdoctor.ingest.parsers.records import SUMMARY_KEYS, normalize_records, resolve_key
from logdoctor.ingest.parsers.tfrecord import looks_like_tfrecord
from logdoctor.ingest.sources import Source
from logdoctor.model import LINE_NO, STEP

EVENT_GLOB = "events.out.tfevents.*"


def event_files(root: Path) -> list[Path]:
    """Event files in a log dir and up to two folder levels below it (run sub-folders), by name."""
    found: list[Path] = []
    for pattern in (EVENT_GLOB, f"*/{EVENT_GLOB}", f"*/*/{EVENT_GLOB}"):
        found += (p for p in root.glob(pattern) if p.is_file())
    return within(str(root), sorted(found), MAX_EVENT_FILES, "TensorBoard event files")


#: Sub-folders that hold one run's split (Keras ``train/`` + ``validation/``), not a run of their own.
SPLIT_DIRS = frozenset({"train", "training", "val", "valid", "validation", "eval", "test"})
_MAX_DEPTH = 3


def _event_folders(root: Path) -> list[Path]:
    folders: set[Path] = set()
    pattern = EVENT_GLOB
    for _ in range(_MAX_DEPTH + 1):
        folders.update(p.parent for p in root.glob(pattern) if p.is_file())
        pattern = f"*/{pattern}"
    return sorted(folders)


def tensorboard_runs(root: Path) -> list[Path]:
    """The run folders of a TensorBoard log dir, when it holds more than one run (else [])."""
    if any(p.is_file() for p in root.glob(EVENT_GLOB)):
        return []  # event files at the top: the folder is one run
    runs: set[Path] = set()
    for folder in _event_folders(root):
        run = folder.parent if folder.name.lower() in SPLIT_DIRS else folder
        runs.add(run)
    return within(str(root), sorted(runs), MAX_RUNS, "TensorBoard runs") if len(runs) > 1 else []


def _loader() -> Any:
    try:
        from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
        from tensorboard.util import tensor_util
    except ImportError:
        raise InputError(
            "TensorBoard event files need the optional reader: pip install 'logdoctor[tensorboard]'"
        ) from None
    return EventFileLoader, tensor_util


def _key(root: Path, file: Path, tag: str) -> str:
    """Column key for a tag: a validation run folder (Keras ``validation/``) prefixes ``val_``."""
    rel = file.parent.relative_to(root).parts if file.parent != root else ()
    if rel and normalize_key(rel[-1]) in vocab.SPLITS and not vocab.is_eval(tag):
        return f"val_{tag}"
    return tag


def _read(root: Path, files: list[Path]) -> pl.DataFrame:
    """Long table (step, key, value, order) of every scalar in the files."""
    loader_cls, tensor_util = _loader()
    steps: list[int] = []
    keys: list[str] = []
    values: list[float] = []
    for file in files:
        for event in loader_cls(str(file)).Load():
            if not event.HasField("summary"):
                continue
            for v in event.summary.value:
                if not v.HasField("tensor"):
                    continue
                arr = tensor_util.make_ndarray(v.tensor)
                if arr.size != 1 or arr.dtype.kind not in "fiub":
                    continue
                steps.append(int(event.step))
                keys.append(_key(root, file, v.tag))
                values.append(float(arr.reshape(-1)[0]))
    return pl.DataFrame(
        {STEP: steps, "key": keys, "value": values},
        schema={STEP: pl.Int64, "key": pl.String, "value": pl.Float64},
    ).with_row_index("order")


def _drop_summary(long: pl.DataFrame) -> pl.DataFrame:
    """Drop HF's end-of-training summary (``train/train_runtime``, ``train/total_flos``... and its
    ``train/train_loss``, a mean over the run) at the steps where it was written: not a step."""
    last = {k: normalize_key(k.rsplit("/", 1)[-1]) for k in long["key"].unique().to_list()}
    summary = [k for k, v in last.items() if v in SUMMARY_KEYS]
    if not summary:
        return long
    marks = long.filter(pl.col("key").is_in(summary))[STEP].unique().implode()
    run_mean = [k for k, v in last.items() if v == "train_loss"]
    drop = pl.col("key").is_in(summary) | (pl.col("key").is_in(run_mean) & pl.col(STEP).is_in(marks))
    return long.filter(~drop)


def _loss_fallback(columns: list[str], fields: FieldMap) -> dict[str, str]:
    """Rename the one training tag ending in ``loss`` (Keras ``epoch_loss``) to loss."""
    if any(resolve_key(c, fields) == "loss" for c in columns):
        return {}
    cands = [c for c in columns if c.lower().endswith("loss") and not vocab.is_eval(c)]
    return {cands[0]: "loss"} if len(cands) == 1 else {}


class TensorBoardParser(Parser):
    """Scalar summaries by step: one row per step (the later event of a tag at a step wins)."""

    name = "tensorboard"
    description = "TensorBoard event files (events.out.tfevents.*) or a log dir; extra: tensorboard"

    def sniff(self, source: Source) -> bool:
        if source.is_dir:
            return source.path is not None and bool(event_files(source.path))
        return source.compression is None and looks_like_tfrecord(source.head_bytes(16))

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        if source.path is None:
            raise InputError(f"{source.name}: TensorBoard event files must be read from a path")
        root = source.path if source.is_dir else source.path.parent
        runs = tensorboard_runs(root) if source.is_dir else []
        if runs:
            names = ", ".join(r.relative_to(root).as_posix() for r in runs[:5])
            raise InputError(f"{source.name}: a log dir of {len(runs)} runs ({names}...): name one, or use analyze")
        files = event_files(root) if source.is_dir else [source.path]
        long = _drop_summary(_read(root, files))
        if long.height == 0:
            raise ParseError(f"{source.name}: no scalar summaries in {len(files)} event file(s)")
        # one record per step in order of first appearance; later writes of a tag win
        wide = long.pivot(on="key", index=STEP, values="value", aggregate_function="last", sort_columns=True)
        first = long.group_by(STEP).agg(pl.col("order").min().alias(LINE_NO))
        wide = wide.join(first, on=STEP).sort(LINE_NO).with_columns(pl.col(LINE_NO).cast(pl.Int64) + 1)
        wide = wide.rename(canonical_renames(wide.columns, fields))
        wide = wide.rename(_loss_fallback([c for c in wide.columns if c not in (STEP, LINE_NO)], fields))
        result = normalize_records(wide, fields, source.name, long.height)
        note = f"{long.height} scalar events from {len(files)} event file(s); line_no = event order"
        return dataclasses.replace(result, notes=(*result.notes, note))
