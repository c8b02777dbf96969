"""Hugging Face Trainer ``trainer_state.json``: the ``log_history`` of train and eval entries (and the
class count of the checkpoint's ``config.json`` beside it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import polars as pl

from logdoctor.errors import ParseError
from logdoctor.ingest import jsonstream, limits
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.framechunks import FrameChunks
from logdoctor.ingest.parsers.base import Parser, ParseResult
from logdoctor.ingest.parsers.hfconfig import sibling_classes
from logdoctor.ingest.parsers.lexicon import BY_NAME
from logdoctor.ingest.parsers.records import normalize_records, resolve_key
from logdoctor.ingest.sources import Source
from logdoctor.model import CANONICAL_COLUMNS, LINE_NO, ConfigFact, LogEvent


def _state(source: Source) -> dict[str, Any]:
    try:
        state = limits.loads(source.text())
    except limits.TooDeep as err:
        raise ParseError(f"{source.name}: trainer_state.json is {err}") from None
    except ValueError as err:
        raise ParseError(f"{source.name}: trainer_state.json is not valid JSON ({err})") from None
    if not isinstance(state, dict) or not isinstance(state.get("log_history"), list):
        raise ParseError(f"{source.name}: JSON object without a log_history list")
    return state


def _history(source: Source) -> tuple[dict[str, Any], pl.DataFrame, int, str | None]:
    """(the state's other members, the ``log_history`` entries that are objects as one frame, their
    number, the key budget's notice or None). The array is streamed into frames a chunk at a time
    (1M entries: about a quarter of the memory of decoding the document whole); a document that
    cannot be streamed to the same frame is read whole, as ``json.loads`` reads it (jsonstream,
    framechunks)."""
    chunks = FrameChunks(strict=False, budget=_budget())

    def entry(value: Any) -> None:
        if isinstance(value, dict):
            chunks.add(value)

    try:
        state = jsonstream.read_object(source.read_bytes(), "log_history", entry)
        frame = chunks.frame()
    except jsonstream.NotStreamable:
        frame = None
    if frame is not None:
        if not chunks.count:
            raise ParseError(f"{source.name}: log_history is empty")
        return state, frame, chunks.count, chunks.budget.note if chunks.budget else None
    state = _state(source)
    frame, entries, note = _history_frame(state.pop("log_history"), source.name)
    return state, frame, entries, note


def _budget() -> limits.KeyBudget:
    """The key budget of a log history: the canonical columns always kept."""
    return limits.KeyBudget(lambda k: resolve_key(k, FieldMap()) in CANONICAL_COLUMNS)


def history_frame(history: list[Any], name: str) -> tuple[pl.DataFrame, int]:
    """(the entries of a ``log_history`` list that are objects as one frame, their number), as
    ``json.loads`` of the document gives them, cut to the key budget; ParseError when there is none."""
    frame, entries, _ = _history_frame(history, name)
    return frame, entries


def _history_frame(history: list[Any], name: str) -> tuple[pl.DataFrame, int, str | None]:
    """``history_frame`` and the key budget's notice (None when it did not bite)."""
    entries = [e for e in history if isinstance(e, dict)]
    if not entries:
        raise ParseError(f"{name}: log_history is empty")
    budget = _budget()
    frame = pl.from_dicts(budget.prune(entries), infer_schema_length=None, strict=False)
    return frame, len(entries), budget.note


def _steps_per_epoch(state: Mapping[str, Any]) -> int | None:
    """``global_step / epoch`` of the final state (the most precise rate the file holds)."""
    step, epoch = state.get("global_step"), state.get("epoch")
    if isinstance(step, int | float) and isinstance(epoch, int | float) and epoch > 0 and step > 0:
        return max(1, round(step / epoch))
    return None


class HfTrainerStateParser(Parser):
    """``log_history`` entries: those with ``loss`` are steps, ``eval_*`` entries are evaluations,
    the final ``train_runtime`` entry is a summary. ``line_no`` is the entry's 1-based index."""

    name = "hf_trainer_state"
    description = "Hugging Face Trainer trainer_state.json (log_history; max_steps, epochs)"

    def sniff(self, source: Source) -> bool:
        if source.is_dir:
            return False
        head = source.head_text()
        if '"log_history"' not in head or not head.lstrip().startswith("{"):
            return False
        lines = [ln for ln in head.splitlines() if ln.strip()]
        # an indented document opens with a lone "{"; a compact one is a single line
        return lines[0].strip() == "{" or len(lines) == 1

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        state, frame, entries, note = _history(source)
        result = state_result(state, frame, entries, fields, source.name, sibling_classes(source.path))
        return dataclasses.replace(result, notes=(*result.notes, note)) if note else result


def state_result(
    state: Mapping[str, Any],
    frame: pl.DataFrame,
    entries: int,
    fields: FieldMap,
    name: str,
    facts: tuple[ConfigFact, ...] = (),
) -> ParseResult:
    """The ParseResult of a trainer state: its ``log_history`` frame (``entries`` objects, ``line_no``
    their 1-based index) through the records path, with what the state's other members say (the
    planned ``max_steps``, steps per epoch) and the configuration ``facts`` found beside it."""
    frame = frame.with_row_index(LINE_NO, offset=1).with_columns(pl.col(LINE_NO).cast(pl.Int64))
    result = normalize_records(frame, fields, name, entries)
    total = state.get("max_steps")
    notes = result.notes
    spe = _steps_per_epoch(state)
    if spe:
        notes = (*notes, f"steps per epoch {spe} = global_step / epoch of the saved state")
    total_ok = isinstance(total, int | float) and total > 0
    done = _summary_entry(frame)
    early = _early_stop(state, done)
    return dataclasses.replace(
        result,
        total_steps=int(total) if total_ok else result.total_steps,  # type: ignore[arg-type]
        steps_per_epoch=spe or result.steps_per_epoch,
        notes=notes,
        config_facts=facts,
        events=tuple(e for e in (early, done) if e is not None),
        snapshot=done is None,
    )


def _early_stop(state: Mapping[str, Any], done: LogEvent | None) -> LogEvent | None:
    """An early-stopping event at the end-of-training entry when the saved ``EarlyStoppingCallback``
    state says it stopped the loop: its ``early_stopping_patience_counter`` reached its
    ``early_stopping_patience`` (transformers/trainer_callback.py EarlyStoppingCallback.on_evaluate sets
    ``control.should_training_stop`` then; its ``state()`` is what ``stateful_callbacks`` holds). None in
    a state saved during training (no end-of-training entry) or without the callback."""
    callbacks = state.get("stateful_callbacks")
    cb = callbacks.get("EarlyStoppingCallback") if isinstance(callbacks, Mapping) else None
    if done is None or not isinstance(cb, Mapping):
        return None
    args, attrs = cb.get("args"), cb.get("attributes")
    patience = args.get("early_stopping_patience") if isinstance(args, Mapping) else None
    counter = attrs.get("early_stopping_patience_counter") if isinstance(attrs, Mapping) else None
    if not (isinstance(patience, int) and isinstance(counter, int) and patience > 0 and counter >= patience):
        return None
    sig = BY_NAME["early_stopping"]
    text = f"stateful_callbacks: EarlyStoppingCallback patience counter {counter} of {patience}"
    return LogEvent(sig.name, sig.cause, done.line, text, done.line, sig.role)


def _summary_entry(frame: pl.DataFrame) -> LogEvent | None:
    """The ``train_runtime`` entry ``Trainer.train`` appends when its loop ends, as an end-of-training
    event; None in a state saved at a checkpoint during training (transformers/trainer.py)."""
    if "train_runtime" not in frame.columns:
        return None
    hit = frame.filter(pl.col("train_runtime").is_not_null())
    if hit.height == 0:
        return None
    line = int(hit[LINE_NO][-1])
    sig = BY_NAME["training_done"]
    return LogEvent(sig.name, sig.cause, line, "log_history entry with train_runtime", line, sig.role)
