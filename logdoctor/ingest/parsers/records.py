"""Normalise key/value records (JSON lines, CSV rows, log_history) into a ParseResult."""

from __future__ import annotations

import dataclasses
import functools
import operator
import re
from collections.abc import Collection

import polars as pl

from logdoctor import vocab
from logdoctor.errors import ParseError
from logdoctor.ingest import limits
from logdoctor.ingest.aliases import ALIASES, FieldMap, normalize_key
from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.ingest.parsers.clock import elapsed_seconds
from logdoctor.ingest.parsers.evalsections import MIN_EVALS, eval_loss_columns
from logdoctor.ingest.parsers.namedtotal import undefined_results
from logdoctor.ingest.parsers.objective import objective_of, summed_eval_parts
from logdoctor.model import BATCH_FP, CANONICAL_COLUMNS, EPOCH, LINE_NO, LOSS, MICRO_FP, STEP

#: Keys whose presence marks an end-of-training summary record (HF ``train_runtime`` ...).
SUMMARY_KEYS: frozenset[str] = frozenset(
    {"train_runtime", "total_flos", "train_samples_per_second", "train_steps_per_second"}
)
#: Keys that hold the planned total number of steps.
TOTAL_KEYS: frozenset[str] = frozenset({"total_steps", "max_steps", "max_iters", "train_iters"})
_FRACTION = r"^\s*\d+\s*/\s*\d+\s*$"


def is_eval_key(key: str) -> bool:
    """True for a key whose values go to the evaluations table, not the training steps: an
    evaluation metric (``eval_loss``, ``dev_wer``, ``val/acc``) or a Lightning epoch aggregate
    (``train_loss_epoch``), as :mod:`logdoctor.vocab` decides."""
    return vocab.is_set_aside(key)


def flatten(frame: pl.DataFrame, sep: str = "/") -> pl.DataFrame:
    """Unnest structs one level (``{"train": {"loss": 1}}`` -> ``train/loss``); drop lists."""
    cols: list[pl.Expr] = []
    for name, dtype in frame.schema.items():
        if isinstance(dtype, pl.Struct):
            cols += [pl.col(name).struct.field(f.name).alias(f"{name}{sep}{f.name}") for f in dtype.fields]
        elif not isinstance(dtype, pl.List | pl.Array | pl.Object):
            cols.append(pl.col(name))
    out = frame.select(cols)
    # a second level of nesting is not flattened: it cannot hold a scalar metric
    return out.select([c for c, t in out.schema.items() if not isinstance(t, pl.Struct | pl.List)])


def _split_fractions(frame: pl.DataFrame) -> pl.DataFrame:
    """Split ``"10/430"`` string columns (``global_step/max_steps``) into two numeric columns."""
    for name, dtype in frame.schema.items():
        if dtype != pl.String or name == LINE_NO:
            continue
        col = frame[name].drop_nulls()
        if col.len() == 0 or not col.str.contains(_FRACTION).all():
            continue
        left, _, right = name.partition("/")
        first, second = (left, right) if right else (name, f"{name}_total")
        parts = pl.col(name).str.split("/")
        frame = frame.with_columns(
            parts.list.get(0, null_on_oob=True).str.strip_chars().alias(first),
            parts.list.get(1, null_on_oob=True).str.strip_chars().alias(second),
        )
        if name not in (first, second):
            frame = frame.drop(name)
    return frame


def to_numeric(frame: pl.DataFrame, keep_text: Collection[str] = ()) -> pl.DataFrame:
    """Cast every column but ``line_no`` and ``keep_text`` to Float64 (strings like ``"11.52"``,
    ``"NaN"`` included); columns with no value at all are dropped. ``keep_text`` columns (batch
    fingerprints) stay strings: a hex digest may look like a number."""
    exprs: list[pl.Expr] = []
    text_cols = [n for n, t in frame.schema.items() if t == pl.String and n != LINE_NO and n not in keep_text]
    direct = frame.select(pl.col(text_cols).cast(pl.Float64, strict=False)) if text_cols else pl.DataFrame()
    nulls = frame.select(pl.col(text_cols).null_count()).row(0) if text_cols else ()
    plain = {n for n, k in zip(text_cols, nulls, strict=True) if direct[n].null_count() == k}
    for name, dtype in frame.schema.items():
        if name == LINE_NO:
            exprs.append(pl.col(name).cast(pl.Int64))
        elif name in keep_text:
            exprs.append(pl.col(name).cast(pl.String))
        elif name in plain:  # every value parsed as it is: normalising its text changes nothing
            exprs.append(pl.lit(direct[name]).alias(name))
        elif dtype == pl.String:
            txt = pl.col(name).str.strip_chars().str.to_lowercase().str.replace(r"^([-+]?)infinity$", "${1}inf")
            exprs.append(txt.cast(pl.Float64, strict=False).alias(name))
        else:
            exprs.append(pl.col(name).cast(pl.Float64, strict=False))
    out = frame.select(exprs)
    return out.select([c for c in out.columns if c == LINE_NO or out[c].null_count() < out.height])


#: A unit in brackets after a field name: ``memory(GiB)``, ``train_speed(iter/s)``.
_UNIT = re.compile(r"\([^()]*\)")


def resolve_key(key: str, fields: FieldMap) -> str:
    """The column for a record key: its alias; an evaluation's own normalised name (``eval/loss`` is no
    ``loss``); else the alias of its last path component (``batch/n_seq`` -> ``seqs``, ``train/lr`` ->
    ``lr``); else the normalised key."""
    canon = fields.canonical(key)
    if canon:
        return canon
    norm = normalize_key(key)
    if vocab.is_set_aside(key):  # ``eval/loss`` is an evaluation, never the training ``loss``
        return norm
    if norm.startswith("train_"):
        canon = fields.canonical(norm[len("train_") :])
    path = _UNIT.sub("", key)  # ``train_speed(iter/s)``: a unit, not a path ("s" is no step)
    if not canon and ("/" in path or "." in path):
        canon = fields.canonical(path.replace(".", "/").rsplit("/", 1)[-1])
    return canon or norm


def _targets(columns: list[str], fields: FieldMap) -> dict[str, list[str]]:
    """target column -> source columns, best first (user override, then alias order)."""
    groups: dict[str, list[str]] = {}
    for col in columns:
        groups.setdefault(resolve_key(col, fields), []).append(col)

    def rank(target: str, src: str) -> tuple[int, int]:
        key = normalize_key(src)
        if fields.overrides.get(target) and normalize_key(fields.overrides[target]) == key:
            return (0, 0)
        names = [normalize_key(n) for n in ALIASES.get(target, ())]
        return (1, names.index(key) if key in names else len(names))

    return {t: sorted(srcs, key=lambda s: rank(t, s)) for t, srcs in groups.items()}


def _apply_step_rule(table: pl.DataFrame, notes: list[str]) -> tuple[pl.DataFrame, int | None]:
    """Give step-less records a step: the integer epoch (Keras) or the loss-record ordinal."""
    if STEP in table.columns:
        return table, None
    if EPOCH in table.columns and table[EPOCH].null_count() == 0:
        ep = table[EPOCH]
        if (ep == ep.round()).all() and (ep.diff().drop_nulls() != 0).all():
            notes.append(
                "no step column: each record is one epoch; step = the epoch number as written"
                + ("" if ep.n_unique() == ep.len() else " (the epoch counter restarts)")
            )
            return table.with_columns(pl.col(EPOCH).cast(pl.Int64).alias(STEP)), 1
    notes.append("no step column: step = the number (1-based) of the loss record in file order")
    ordinal = pl.col(LOSS).is_not_null().cast(pl.Int64).cum_sum()
    return table.with_columns(ordinal.alias(STEP)), None


def drop_summaries(frame: pl.DataFrame, skips: dict[str, int]) -> pl.DataFrame:
    """Drop end-of-training summary records (``train_runtime``, ``total_flos``...) and their columns:
    their ``train_loss`` is an average over the run, not a step."""
    summary = [c for c in frame.columns if normalize_key(c) in SUMMARY_KEYS]
    if not summary:
        return frame
    is_summary = pl.any_horizontal([pl.col(c).is_not_null() for c in summary])
    count_skips(skips, "run summary record", frame.filter(is_summary).height)
    return frame.filter(~is_summary).drop(summary)


def _resolve_columns(
    frame: pl.DataFrame, fields: FieldMap, name: str
) -> tuple[pl.DataFrame, list[str], dict[str, str]]:
    """(table with resolved column names, evaluation column names, source -> column aliases)."""
    sources = [c for c in frame.columns if c != LINE_NO]
    evals_src = [c for c in sources if is_eval_key(c)]
    groups = _targets([c for c in sources if c not in evals_src], fields)
    groups.pop(LINE_NO, None)  # a record's own "line no" key never replaces ours
    eval_groups: dict[str, list[str]] = {}
    for c in evals_src:
        eval_groups.setdefault(normalize_key(c), []).append(c)
    merged = [*groups.items(), *eval_groups.items()]
    resolved = [pl.coalesce([pl.col(s) for s in srcs]).alias(t) for t, srcs in merged]
    if LOSS not in groups:
        seen = ", ".join(sorted(sources)[:20]) or "none"
        raise ParseError(f"{name}: no record holds a training loss (keys seen: {seen})")
    aliases = {s: t for t, srcs in groups.items() for s in srcs if s != t}
    return frame.select(pl.col(LINE_NO), *resolved), list(eval_groups), aliases


def compose_objective(frame: pl.DataFrame, fields: FieldMap, notes: list[str]) -> pl.DataFrame:
    """Give a table with no field named the training loss a ``loss`` column, with the note that says
    what it is: the total, the sum of parts the trainer sums, or the main part
    (:func:`~logdoctor.ingest.parsers.objective.objective_of`); else, in a log of evaluations only, its
    evaluation loss at each evaluation (ln of a perplexity). Unchanged when a field resolves to the loss
    (``--map loss=FIELD`` included) or none of these exists."""
    keys = [c for c in frame.columns if c != LINE_NO]
    if any(resolve_key(c, fields) == LOSS for c in keys):
        return frame
    obj = objective_of(keys)
    if obj is not None:
        notes.append(obj.note)
        frame = frame.with_columns(functools.reduce(operator.add, [pl.col(f) for f in obj.fields]).alias(LOSS))
        held_out = summed_eval_parts(obj, keys) if obj.summed else None
        if held_out is not None and held_out[0] not in frame.columns:
            name, parts = held_out
            shown = " + ".join(f"`{p}`" for p in parts)
            notes.append(f"the eval loss `{name}` analysed is the sum of its parts {shown}")
            frame = frame.with_columns(functools.reduce(operator.add, [pl.col(p) for p in parts]).alias(name))
        return frame
    for col in eval_loss_columns([c for c in keys if is_eval_key(c)]):
        n = frame[col].is_not_null().sum()
        if n < MIN_EVALS:
            continue
        is_ppl = vocab.classify(col).is_perplexity
        how = f"ln of the eval `{col}`" if is_ppl else f"the eval `{col}`"
        notes.append(
            f"the log prints no training loss, only evaluations: the curve analysed is {how} at its {n} "
            "evaluations (every finding's 'loss' is that evaluation loss)"
        )
        return frame.with_columns((pl.col(col).log() if is_ppl else pl.col(col)).alias(LOSS))
    return frame


def _split_rows(table: pl.DataFrame, eval_names: list[str], skips: dict[str, int]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(training rows: those with a loss, evaluation rows: those with an evaluation value)."""
    has_loss = pl.col(LOSS).is_not_null()
    has_eval = pl.lit(False)
    if eval_names:
        has_eval = pl.any_horizontal([pl.col(c).is_not_null() for c in eval_names])
    count_skips(skips, "evaluation record", table.filter(~has_loss & has_eval).height)
    count_skips(skips, "record without a training loss", table.filter(~has_loss & ~has_eval).height)
    train = table.filter(has_loss).drop(eval_names)
    keys = [c for c in (STEP, LINE_NO, EPOCH) if c in table.columns]
    evals = table.filter(has_eval).select(keys + eval_names)
    no_step = train.filter(pl.col(STEP).is_null()).height
    count_skips(skips, "record without a step number", no_step)
    train = train.filter(pl.col(STEP).is_not_null()).with_columns(pl.col(STEP).round().cast(pl.Int64))
    return train.select([c for c in train.columns if train[c].null_count() < train.height]), evals


def normalize_records(frame: pl.DataFrame, fields: FieldMap, name: str, lines_read: int) -> ParseResult:
    """Turn raw records (one row each, a ``line_no`` column, raw keys) into a ParseResult.

    Summary records are skipped, evaluation keys go to ``evals``, names are resolved through the
    alias table, values are made numeric, and records without a loss are skipped with a reason.

    Raises:
        ParseError: no record holds a training loss.
    """
    skips: dict[str, int] = {}
    frame, budget = budget_columns(flatten(frame), fields)
    frame = elapsed_seconds(_split_fractions(frame))
    text_cols = [c for c in frame.columns if resolve_key(c, fields) in (BATCH_FP, MICRO_FP)]
    frame = undefined_results(to_numeric(drop_summaries(frame, skips), keep_text=text_cols))
    totals = [c for c in frame.columns if normalize_key(c) in TOTAL_KEYS]
    total = frame.select(pl.max_horizontal(totals).max()).item() if totals else None
    notes: list[str] = [budget] if budget else []
    frame = compose_objective(frame.drop(totals), fields, notes)
    table, eval_names, aliases = _resolve_columns(frame, fields, name)
    table, spe = _apply_step_rule(table, notes)
    train, evals = _split_rows(table, eval_names, skips)
    if train.height == 0:
        raise ParseError(f"{name}: no record holds a training loss and a step ({table.height} read)")
    return ParseResult(
        table=train,
        evals=evals,
        lines_read=lines_read,
        skip_reasons=skips,
        total_steps=int(total) if total is not None else None,
        steps_per_epoch=spe,
        aliases=aliases,
        notes=tuple(notes),
        keys_seen=tuple(c for c in frame.columns if c != LINE_NO),
    )


def budget_columns(frame: pl.DataFrame, fields: FieldMap) -> tuple[pl.DataFrame, str | None]:
    """``frame`` with at most ``limits.MAX_KEYS`` record keys (those that resolve to a canonical
    column, then the most often present), and the notice when some were dropped."""
    if frame.width <= limits.MAX_KEYS + 1:
        return frame, None
    names = [c for c in frame.columns if c != LINE_NO]
    present = frame.select(pl.col(names).is_not_null().sum()).row(0)
    counts = dict(zip(names, present, strict=True))
    always = {c for c in names if resolve_key(c, fields) in CANONICAL_COLUMNS}
    kept, note = limits.keep_keys(counts, always, records=frame.height)
    return frame.select([c for c in frame.columns if c == LINE_NO or c in kept]), note


def count_skips(skips: dict[str, int], reason: str, n: int) -> None:
    """Add ``n`` skipped lines under ``reason`` (nothing when ``n`` is 0)."""
    if n:
        skips[reason] = skips.get(reason, 0) + n


def merge_skips(result: ParseResult, extra: dict[str, int]) -> ParseResult:
    """A copy of ``result`` with ``extra`` skip counts added."""
    skips = dict(result.skip_reasons)
    for k, v in extra.items():
        count_skips(skips, k, v)
    return dataclasses.replace(result, skip_reasons=skips)
