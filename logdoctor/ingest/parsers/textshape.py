"""The general text path: group lines by shape, plan each shape once, extract all values at once."""

from __future__ import annotations

import dataclasses
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import polars as pl

from logdoctor.ingest import limits
from logdoctor.ingest.aliases import ALIASES, FieldMap
from logdoctor.ingest.parsers.lines import LINE_NO
from logdoctor.ingest.parsers.screen import Lines
from logdoctor.ingest.parsers.textblocks import MSG
from logdoctor.ingest.parsers.textplan import (
    BATCHES,
    BATCHES_TOTAL,
    STRING_COLUMNS,
    Plan,
    plan_for,
    total_loss_keys,
)
from logdoctor.ingest.parsers.textrules import VALUE, shape_of
from logdoctor.model import CANONICAL_COLUMNS, EPOCH, LOSS, STEP

MAX_LINE = 4000
#: ``number of nan iterations: 0``: a nan that is a word of a key, not a value (textrules).
#: A duration in words (ms-swift ``remaining_time``): not one number.
DURATION = r"\b\d+h(?: \d+m)?(?: \d+s)?\b|\b\d+m \d+s\b"
NAN_WORD = r"(?i)\b(of|the|at|per|in|no|with|a|an|to|for)\s+nan(\s+[a-z]+[^|,;=:]{0,40}[:=])"
#: ``BLEU-4 31.75`` / ``ROUGE-1 45.20``: a metric name ending in ``-N`` before its decimal value; the
#: ``-4`` is part of the key (``bleu_4``), not a value of its own.
DASHED_KEY = r"([A-Za-z])-(\d{1,2})(\s+[-+]?\d+\.\d)"
#: ``Acc@1 27.240`` / ``Prec@5: 91.2`` (top-k metrics): the ``@1`` is part of the key (``acc1``), not
#: the value (SwAV/DINO/torchvision reference loggers; read as ``Acc@ = 1`` before issue 29).
AT_KEY = r"([A-Za-z])@(\d{1,2})(\s*[:=]?\s*[-+]?\d)"
ValueOf = Callable[[int], pl.Expr]
_SHAPE, _PLAN, _VALS = "_shape", "_plan", "_vals"
_KEEP = ("train", "eval", "unstepped")
#: Columns a plan reads that the key budget never drops (the run's canonical columns and what the
#: parser derives steps and totals from).
_ALWAYS = frozenset({*CANONICAL_COLUMNS, BATCHES, BATCHES_TOTAL})
_REASON = {"eval": "eval line", "unstepped": "no step"}


@dataclass(slots=True)
class Extracted:
    """Rows read from a set of lines, and why the others were skipped."""

    train: list[pl.DataFrame] = field(default_factory=list)
    evals: list[pl.DataFrame] = field(default_factory=list)
    totals: list[pl.Series] = field(default_factory=list)
    skips: Counter[str] = field(default_factory=Counter)
    aliases: dict[str, str] = field(default_factory=dict)
    unstepped: list[pl.DataFrame] = field(default_factory=list)
    #: the line shape of each ``unstepped`` frame (the fast path and the general path may each
    #: read some lines of one shape: text.py counts them as one)
    unstepped_shapes: list[str] = field(default_factory=list)
    keys_seen: set[str] = field(default_factory=set)
    lossless: list[pl.DataFrame] = field(default_factory=list)
    ppl_loss: bool = False
    #: keys of a total loss read as ``loss`` on training lines that name no ``loss`` (``avg_loss``)
    total_loss: set[str] = field(default_factory=set)
    #: a global step beside a position-in-epoch counter (Coqui ``STEP: i/N -- GLOBAL_STEP: G``)
    epoch_position: bool = False
    #: notices for the run (a limit that bit)
    notes: list[str] = field(default_factory=list)
    #: the epoch a derived step counts from (``first_epoch``), the same for every line shape; set
    #: before reading to the one the lines before these counted from (a chunk of a growing log)
    first_epoch: int | None = None


def prefilter(fields: FieldMap) -> str:
    """A regex that every line able to hold a step or an eval metric matches (cheap to test):
    a step alias (or the user's step key), a derived-step key, or an eval metric word."""
    names = {n for n in ALIASES[STEP] if len(n) > 2} | set(fields.overrides.values())
    # the eval metrics a summary line may report without a loss (textplan._is_metric decides)
    names |= {BATCHES, "checkpoint", "loss", "ppl", "perplexity", "acc", "bleu", "tel", "wer", "cer", "f1", "map"}
    words = "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))
    return rf"(?i)(?:{words}|\bs:|\bit\b|\bup\.|\bep\b)"


def numeric(expr: pl.Expr, name: str) -> pl.Expr:
    """A value column as logs print it -> Float64 (thousands separators dropped; nan/inf kept)."""
    if name in STRING_COLUMNS:
        return expr.alias(name)
    return expr.str.replace_all(",", "", literal=True).cast(pl.Float64, strict=False).alias(name)


def extract(frame: pl.DataFrame, fields: FieldMap, out: Extracted) -> None:
    """Read every line of ``frame`` (columns line_no, msg) into ``out``."""
    msg = pl.col(MSG)
    lines = Lines.of(frame[MSG])
    for pattern, repl in ((NAN_WORD, "${1} nan_${2}"), (DASHED_KEY, "${1}_${2}${3}"), (AT_KEY, "${1}${2}${3}")):
        # plan and extraction must see the same values (``nan`` as a word, ``a-b.c``, ``x@k``)
        if lines.contains(frame[MSG], pattern):
            frame = frame.with_columns(msg.str.replace_all(pattern, repl))
            lines = Lines.of(frame[MSG])
    if frame[MSG].str.contains(r"\d[hm] \d").any() and frame[MSG].str.contains(DURATION).any():
        # ``3h 35m 58s`` is no number (3.0 is wrong); the cheap test first, the regex is costly
        frame = frame.with_columns(msg.str.replace_all(DURATION, "duration"))
    long = frame[MSG].str.len_bytes() > MAX_LINE
    has_digit = frame[MSG].str.contains(r"\d") & frame[MSG].str.contains(prefilter(fields))
    out.skips["line too long"] += int(long.sum())
    out.skips["no step"] += int((~has_digit & ~long).sum())
    cand = frame.filter(has_digit & ~long)
    cand = cand.with_columns(shape_of(cand[MSG]).alias(_SHAPE))
    if cand.height == 0:
        return
    reps = cand.group_by(_SHAPE).agg(msg.first(), pl.len().alias("n"))
    plans: dict[int, Plan] = {}
    ids: list[int] = []
    for pid, (rep, n) in enumerate(zip(reps[MSG], reps["n"], strict=True)):
        plan = plan_for(rep, fields)
        plans[pid] = plan
        ids.append(pid)
        if plan.role != "train":
            out.skips[_REASON.get(plan.role, plan.role)] += n
        if plan.role in _KEEP:
            out.aliases.update(plan.aliases)
        if plan.role == "train":
            out.total_loss.update(total_loss_keys(plan))
        out.keys_seen.update(plan.train, plan.evals)
    shapes = dict(zip(ids, reps[_SHAPE], strict=True))
    same = budget_keys(plans, dict(zip(ids, reps["n"], strict=True)), out)
    reps = reps.select(_SHAPE, pl.Series(_PLAN, [same[pid] for pid in ids], dtype=pl.Int64))
    keep = [pid for pid, p in plans.items() if p.role in _KEEP or _lossless(p)]
    used = cand.join(reps, on=_SHAPE, how="inner").filter(pl.col(_PLAN).is_in(keep))
    if used.height == 0:
        return
    used = used.with_columns(msg.str.extract_all(VALUE).alias(_VALS))
    parts = [(int(pid), part) for (pid,), part in used.partition_by(_PLAN, as_dict=True, maintain_order=True).items()]
    out.first_epoch = first_epoch([(part, plans[pid]) for pid, part in parts], out.first_epoch)
    for pid, part in parts:
        rows(part, plans[pid], out, shape=shapes[pid])


def _plan_key(plan: Plan) -> tuple[object, ...]:
    return (plan.role, tuple(plan.train.items()), tuple(plan.evals.items()), plan.total, plan.ppl, plan.derived_step)


def budget_keys(plans: dict[int, Plan], lines: dict[int, int], out: Extracted) -> dict[int, int]:
    """Keep at most ``limits.MAX_KEYS`` metric names over all shapes (the canonical and planning
    columns always, then the names on most lines): each plan loses the others, and plans that
    become alike are read as one (pid -> the pid whose plan reads its lines). A log whose key
    names change from line to line (``k1234_loss=``) would otherwise give one shape, one frame
    and one column per line."""
    counts: Counter[str] = Counter()
    for pid, plan in plans.items():
        for key in (*plan.train, *plan.evals):
            counts[key] += lines[pid]
    ppl = {plan.ppl for plan in plans.values() if plan.ppl is not None}
    kept, note = limits.keep_keys(counts, always=_ALWAYS | ppl, records=sum(lines.values()))
    if note is None:
        return {pid: pid for pid in plans}
    out.notes.append(note)
    out.keys_seen.intersection_update(kept)
    first: dict[tuple[object, ...], int] = {}
    same: dict[int, int] = {}
    for pid, plan in plans.items():
        train = {k: i for k, i in plan.train.items() if k in kept}
        evals = {k: i for k, i in plan.evals.items() if k in kept}
        plans[pid] = plan = dataclasses.replace(plan, train=train, evals=evals)
        same[pid] = first.setdefault(_plan_key(plan), pid)
    return same


def _lossless(plan: Plan) -> bool:
    """A step line ``N/T`` without a loss (Megatron's iteration whose batches were all skipped)."""
    return plan.role == "no loss value" and STEP in plan.train and plan.total is not None


def _last_drawings(table: pl.DataFrame, out: Extracted) -> pl.DataFrame:
    """One row per batch count: tqdm redraws a bar at the same count when ``set_postfix`` changes
    its values (``12/115 [00:38, loss=2.76]`` then ``12/115 [00:41, loss=2.56]``); the last drawing
    is kept, as a repeated step keeps its last write, and the others are no repeated steps of
    interleaved writers (LD005, issue 28)."""
    again = (pl.col(STEP) == pl.col(STEP).shift(-1)).fill_null(False)
    redrawn = int(table.select(again.sum()).item() or 0)
    if not redrawn:
        return table
    out.skips["progress-bar redraw"] += redrawn
    return table.filter(~again)


def drop_bar_starts(table: pl.DataFrame, skips: Counter[str]) -> pl.DataFrame:
    """Rows without the ``0/N`` drawings of a progress bar that counts completed batches (one
    that reaches ``N/N``) whose step another row writes: at 0 no batch of the epoch is done, and
    the step the count gives is the one the previous epoch's ``N/N`` wrote (read as a counter
    reset, LD003, issue 28), or whose step is below one written before it: the bar reset at an
    epoch's end and drawn at ``0/N`` before it takes the next epoch's number (Lightning's
    ``Epoch 0: 0/40`` after ``Epoch 0: 40/40``, then ``Epoch 1: 0/40``), with the last step's
    values. Batch indices from 0 (never ``N/N``) and counters beside a global step (NeMo
    ``iteration 0/9 | global_step: 0``: no step written twice) are left alone."""
    if BATCHES not in table.columns or BATCHES_TOTAL not in table.columns:
        return table
    if not (table[BATCHES] == table[BATCHES_TOTAL]).any():
        return table
    stale = pl.col(STEP).is_duplicated() | (pl.col(STEP) < pl.col(STEP).cum_max().shift(1))
    start = ((pl.col(BATCHES) == 0) & stale).fill_null(False)
    n = int(table.select(start.sum()).item() or 0)
    if n:
        skips["progress bar at 0/N"] += n
        table = table.filter(~start)
    return table


def list_value(i: int) -> pl.Expr:
    """The i-th value of a line, from the list that ``extract`` built."""
    return pl.col(_VALS).list.get(i, null_on_oob=True)


def _select(part: pl.DataFrame, cols: dict[str, int], value: ValueOf, cast: bool) -> pl.DataFrame:
    exprs = [numeric(value(i), name) if cast else value(i).alias(name) for name, i in cols.items()]
    return part.select(pl.col(LINE_NO), *exprs)


def first_epoch(
    parts: list[tuple[pl.DataFrame, Plan]],
    carried: int | None,
    value: ValueOf = list_value,
    cast: bool = True,
) -> int | None:
    """The epoch that derived steps count from, ``step = (epoch - first) x batches_total + batches``:
    0 for a counter from 0 (Lightning's ``Epoch 0:`` bars), 1 for one from 1 (``| epoch 1 |``),
    the lowest epoch of every line shape that derives its step, at most 1 (a log that begins at a
    later epoch, a resumed run, counts on from its earlier epochs), and at most ``carried``, the
    one the log's earlier lines counted from. One value for the whole log: Lightning adds
    ``val_loss`` to the bar's postfix from the end of the first epoch, so its first epoch and the
    later ones are two line shapes, and a first epoch per shape put the second epoch's steps on
    the first's. None when no line derives its step and nothing was carried."""
    lows = [
        _select(part, {EPOCH: plan.train[EPOCH]}, value, cast)[EPOCH].min()
        for part, plan in parts
        if plan.role == "train" and plan.derived_step
    ]
    seen = [float(x) for x in lows if x is not None and math.isfinite(float(x))]  # type: ignore[arg-type]
    if not seen:
        return carried
    low = min(math.floor(min(seen)), 1)
    return low if carried is None else min(low, carried)


def rows(
    part: pl.DataFrame,
    plan: Plan,
    out: Extracted,
    value: ValueOf = list_value,
    cast: bool = True,
    shape: str = "",
) -> None:
    """Build the train and eval rows of one shape's lines.

    Args:
        part: the lines (``line_no`` and whatever ``value`` reads).
        plan: how lines of this shape are read.
        out: where rows, totals and skip counts go.
        value: expression for the i-th value of a line.
        cast: True when ``value`` gives text to convert, False when it is already typed.
        shape: the lines' shape (textrules.shape_of).
    """
    if plan.total is not None:
        out.totals.append(_select(part, {"t": plan.total}, value, cast)["t"])
    if plan.evals:
        out.evals.append(_select(part, plan.evals, value, cast))
    if plan.role == "unstepped":
        out.unstepped.append(_select(part, plan.train, value, cast))
        out.unstepped_shapes.append(shape)
    if _lossless(plan):
        rows_ = _select(part, plan.train, value, cast).with_columns(pl.col(STEP).cast(pl.Int64, strict=False))
        out.lossless.append(rows_.filter(pl.col(STEP).is_not_null()))
    if plan.role != "train":
        return
    table = _select(part, plan.train, value, cast)
    out.epoch_position |= BATCHES in plan.train and not plan.derived_step
    if plan.derived_step:
        if out.first_epoch is None:  # a caller that reads one shape alone
            out.first_epoch = first_epoch([(part, plan)], None, value, cast)
        step = (pl.col(EPOCH) - (out.first_epoch or 0)) * pl.col(BATCHES_TOTAL) + pl.col(BATCHES)
        table = _last_drawings(table.with_columns(step.alias(STEP)), out)
    if plan.ppl is not None:
        table = table.with_columns(pl.col(plan.ppl).log().alias(LOSS))
        out.ppl_loss = True
    table = table.with_columns(pl.col(STEP).cast(pl.Int64, strict=False))
    bad = table[STEP].is_null() | table[LOSS].is_null()
    if bad.any():
        out.skips["no step" if table[STEP].null_count() else "no loss value"] += int(bad.sum())
        table = table.filter(~bad)
    out.train.append(table)
