"""Records already in memory (a polars or pandas DataFrame, a list of dicts, a trainer state) read as
the JSON-lines and trainer_state readers read theirs: through ``records.normalize_records``.

A frame's rows are records in order (``line_no`` = the row's 1-based number); a list's dicts are a
``log_history`` (``trainer_state.json``'s own reading: its other members, when given, state the plan).
Rows that carry W&B's bookkeeping columns (``_step``, ``_runtime``, ``_timestamp``: ``run.history()``,
``run.scan_history()``) are W&B history rows, read with the W&B reader's rule for its counters.
pandas writes a missing value as NaN: a pandas NaN is read as missing, as the frame's own ``isna``
says; a polars null is missing and a polars NaN is a NaN.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from logdoctor.errors import InputError, ParseError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.namespaced import WANDB_INTERNAL, canonical_renames, dropped
from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.ingest.parsers.hf_state import history_frame, state_result
from logdoctor.ingest.parsers.records import normalize_records
from logdoctor.model import FRAME_FORMAT, LINE_NO, LOSS, RECORDS_FORMAT

#: ``RunMeta.format`` of each kind of in-memory records (a trainer state is read as its file is).
FRAME, RECORDS, STATE = FRAME_FORMAT, RECORDS_FORMAT, "hf_trainer_state"
#: The members of a trainer state read besides its history (``state_result``).
STATE_MEMBERS = ("max_steps", "global_step", "epoch")
#: What ``parse_records`` accepts, for messages.
EXPECTED = "a polars or pandas DataFrame, a list of dicts (a log_history) or a trainer state"
_MISSING = "record without a training loss"
_NAN_TAIL = "loss was NaN; a polars DataFrame or a list of dicts tells them apart"
#: A pandas frame with no loss left: it may have held only NaN losses.
PANDAS_NAN = f"pandas writes a missing value as NaN: the rows without a training loss may be rows whose {_NAN_TAIL}"


def is_pandas(obj: object) -> bool:
    """A pandas DataFrame (told by its class, without importing pandas)."""
    return type(obj).__module__.split(".")[0] == "pandas" and type(obj).__name__ == "DataFrame"


def is_records(obj: object) -> bool:
    """Something ``parse_records`` reads (checked without importing pandas)."""
    if "polars" in sys.modules and isinstance(obj, pl.DataFrame | pl.LazyFrame):
        return True
    if is_pandas(obj) or _state_of(obj) is not None:
        return True
    return (
        isinstance(obj, Sequence)
        and not isinstance(obj, str | bytes)
        and bool(obj)
        and all(isinstance(e, Mapping) for e in obj)
    )


def parse_records(obj: object, fields: FieldMap, name: str) -> tuple[ParseResult, str]:
    """(the ParseResult of in-memory records, their format name).

    Raises:
        InputError: ``obj`` is none of EXPECTED (a list that mixes dicts with other things included),
            or an empty one.
        ParseError: as the readers raise it (no record holds a training loss, ...).
    """
    if not is_records(obj):
        got = "an empty list" if isinstance(obj, list | tuple) and not obj else type(obj).__name__
        raise InputError(f"{name}: expected {EXPECTED}, got {got}")
    state = _state_of(obj)
    if state is not None:  # as trainer_state.json is read
        frame, entries = history_frame(list(state.pop("log_history")), name)
        return state_result(state, frame, entries, fields, name), STATE
    if isinstance(obj, pl.LazyFrame):
        obj = obj.collect()
    if isinstance(obj, pl.DataFrame) or is_pandas(obj):
        frame = obj if isinstance(obj, pl.DataFrame) else _from_pandas(obj, name)
        if frame.height == 0 or frame.width == 0:
            raise InputError(f"{name}: the DataFrame is empty")
        try:
            result = _rows(frame, fields, name)
        except ParseError as e:
            if is_pandas(obj) and _has_nan(obj):
                # every loss NaN: pandas holds it as missing, so the NaN finding cannot be made from it
                raise ParseError(f"{e}; {PANDAS_NAN}") from None
            raise
        return (_pandas_nan_note(result, obj) if is_pandas(obj) else result), FRAME
    frame, _ = history_frame([dict(e) for e in obj], name)  # type: ignore[attr-defined]  # is_records: dicts
    return _rows(frame, fields, name), RECORDS


def _rows(frame: pl.DataFrame, fields: FieldMap, name: str) -> ParseResult:
    """Rows in order through the records path, ``line_no`` their 1-based number."""
    if LINE_NO in frame.columns:  # a column of the user's: it is their data, our line numbers are ours
        frame = frame.rename({LINE_NO: f"{LINE_NO}_"})
    frame = _temporal_as_text(_wandb_rows(frame, fields))
    frame = frame.with_row_index(LINE_NO, offset=1).with_columns(pl.col(LINE_NO).cast(pl.Int64))
    return normalize_records(frame, fields, name, frame.height)


def _wandb_rows(frame: pl.DataFrame, fields: FieldMap) -> pl.DataFrame:
    """W&B history rows (a bookkeeping column present) with the W&B reader's counters; others as they are."""
    if not any(c in WANDB_INTERNAL for c in frame.columns):
        return frame
    renames = canonical_renames(frame.columns, fields)
    return frame.drop(dropped(frame.columns, renames)).rename(renames)


def _temporal_as_text(frame: pl.DataFrame) -> pl.DataFrame:
    """Dates and times as their text, as a JSON record holds them (no metric is a date)."""
    temporal = [c for c, t in frame.schema.items() if t.is_temporal()]
    return frame.with_columns(pl.col(temporal).cast(pl.String)) if temporal else frame


def _state_of(obj: object) -> dict[str, Any] | None:
    """A trainer state's ``log_history`` and plan: a transformers ``TrainerState`` (or anything with a
    ``log_history`` list) or a mapping of one (``json.load`` of trainer_state.json); else None."""
    if isinstance(obj, Mapping):
        history = obj.get("log_history")
        members = {k: obj.get(k) for k in STATE_MEMBERS}
    else:
        history = getattr(obj, "log_history", None)
        members = {k: getattr(obj, k, None) for k in STATE_MEMBERS}
    if not isinstance(history, list):
        return None
    return {"log_history": history, **members}


def _from_pandas(df: Any, name: str) -> pl.DataFrame:
    """A pandas DataFrame as polars: names as text, a named index as a column (``set_index("step")``),
    NaN as missing; a column polars cannot take whole (mixed objects) as the text of its values."""
    if any(n is not None for n in df.index.names):
        df = df.reset_index()
    df = df.rename(columns=str)
    if len(set(df.columns)) != len(df.columns):
        raise InputError(f"{name}: the DataFrame has repeated column names")
    try:
        return pl.from_pandas(df)
    except Exception:  # pyarrow's and polars' conversion errors share no base: go column by column
        return pl.DataFrame([_pandas_column(df[c], c) for c in df.columns])


def _pandas_column(col: Any, name: str) -> pl.Series:
    try:
        return pl.Series(name, pl.from_pandas(col))
    except Exception:  # as above
        text = [None if v is None or v != v else str(v) for v in col.tolist()]  # v != v: NaN
        return pl.Series(name, text, dtype=pl.String)


def _has_nan(df: Any) -> bool:
    """Whether a pandas frame holds any NaN (missing) cell."""
    return bool(df.isna().to_numpy().any())


def _pandas_nan_note(result: ParseResult, df: Any) -> ParseResult:
    """Say that a pandas frame's NaN losses, if any, were read as missing (pandas cannot tell them apart).
    Counted on the frame's own loss column (the one read as ``loss``): a row whose loss is NaN beside
    evaluation values is read as an evaluation record, not as a record without a loss (timm's
    ``summary.csv`` once its train loss turned NaN)."""
    source = [k for k, v in result.aliases.items() if v == LOSS and k in df.columns]
    column = source[0] if source else (LOSS if LOSS in df.columns else None)
    missing = int(df[column].isna().sum()) if column is not None else result.skip_reasons.get(_MISSING, 0)
    if not missing or not _has_nan(df):
        return result
    note = f"pandas writes a missing value as NaN: {missing} rows without a training loss may be rows whose {_NAN_TAIL}"
    return dataclasses.replace(result, notes=(*result.notes, note))
