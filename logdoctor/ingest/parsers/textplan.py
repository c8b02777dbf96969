"""Decide, once per line shape, what each value of such lines is and whether they are steps."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from logdoctor import vocab
from logdoctor.ingest.aliases import FieldMap, normalize_key
from logdoctor.ingest.parsers.textrules import (
    CODE_RE,
    EVAL_MARK_RE,
    eval_step,
    is_eval_key,
    line_keys,
    resolve,
    step_rank,
    value_spans,
)
from logdoctor.model import ACC, BATCH_FP, BATCHES, BATCHES_TOTAL, EPOCH, LOSS, MICRO_FP, STEP

Role = Literal["train", "eval", "unstepped", "source code / config", "no step", "no loss value"]
#: Perplexity keys: cross-entropy loss is their natural log when a log prints no loss.
PPL_KEYS = ("ppl", "train_ppl", "perplexity", "train_perplexity")
#: ``| epoch 3 | 200/2983 batches |`` (pytorch word_language_model): step derived from these.
STRING_COLUMNS = frozenset({BATCH_FP, MICRO_FP})
#: Names a log gives its total loss when no field is called ``loss`` (Coqui TTS ``avg_loss``): read
#: as the training loss then, and said so (text.py). Parts such as ``loss_mel`` are never picked.
TOTAL_LOSS_KEYS = ("avg_loss", "loss_total", "total_loss", "loss_sum", "sum_loss", "overall_loss")
#: An evaluation record without a step is kept only when it names one of these metrics.
_METRICS = ("loss", "ppl", "perplexity", "acc", "bleu")


def _is_metric(name: str) -> bool:
    """A column an evaluation reports: a loss, perplexity, accuracy or BLEU by name, or any metric whose
    direction the vocabulary knows (WER/CER, F1, mAP...: deepspeech.pytorch's ``Validation Summary
    Epoch: [1]  Average WER 99.0  Average CER 48.6``)."""
    return any(m in name for m in _METRICS) or vocab.direction(name) is not None


@dataclass(frozen=True, slots=True)
class Plan:
    """How to read every line of one shape.

    Attributes:
        role: what the lines are: train steps, eval records, ``unstepped`` (a loss but no step:
            used only when no line of the log has a step), or a reason to skip them.
        train: column -> value index for the training row.
        evals: column -> value index for the evaluation row (may accompany a train row).
        total: value index of the planned total steps (``step 254/52000``), or None.
        ppl: column whose natural log is the loss (no loss printed), or None.
        derived_step: True when the step is ``(epoch - 1) * batches_total + batches``.
        aliases: source key -> column, for renamed keys.
    """

    role: Role
    train: dict[str, int] = field(default_factory=dict)
    evals: dict[str, int] = field(default_factory=dict)
    total: int | None = None
    ppl: str | None = None
    derived_step: bool = False
    aliases: dict[str, str] = field(default_factory=dict)


def _eval_name(name: str) -> str:
    """Name of a metric in the evals table: ``loss`` -> ``val_loss``, ``acc`` -> ``val_acc``."""
    return f"val_{name}" if name in (LOSS, ACC) else name


def _columns(msg: str, fields: FieldMap) -> tuple[list[tuple[str, int, str]], int | None, int | None]:
    """(column, value index, source key) per keyed value, the step index and the total index."""
    lk = line_keys(msg)
    cols: list[tuple[str, int, str]] = []
    step_idx: int | None = None
    best = 1 << 30
    total_of: dict[int, str] = {}
    steps: list[tuple[int, str]] = []
    for i, (key, is_total) in enumerate(zip(lk.keys, lk.totals, strict=True)):
        if key is None:
            continue
        name = resolve(key, fields)
        if is_eval_key(name) and eval_step(name, fields):
            name = STEP
        if is_total:
            total_of[i] = name
            continue
        if name == STEP:
            steps.append((i, key))
            rank = step_rank(key, fields)
            if rank < best:
                best, step_idx = rank, i
            continue
        cols.append((name, i, key))
    step_idx = _global_or_two_level(steps, total_of, cols, step_idx)
    total_idx = None
    if step_idx is not None and total_of.get(step_idx + 1) == STEP:
        total_idx = step_idx + 1
    cols += [(f"{name}_total", i, f"{name}_total") for i, name in total_of.items() if name != STEP]
    return cols, step_idx, total_idx


def _global_or_two_level(
    steps: list[tuple[int, str]],
    total_of: dict[int, str],
    cols: list[tuple[str, int, str]],
    chosen: int | None,
) -> int | None:
    """Pick the step among several step keys on one line.

    A ``global`` step wins (Coqui ``STEP: 24/36 -- GLOBAL_STEP: 1000025``). Two counters where
    only one has a total (``iteration:1 step:16/652``) are two levels: the one with the total
    counts within the other, so they become ``batches``/``batches_total`` under an ``epoch``
    and the step is derived from them. Returns the value index of the step (None when derived).
    """
    if len(steps) < 2:
        return chosen
    glob = [i for i, key in steps if "global" in key.lower()]
    if glob:
        # the other counter with a total is the position in the epoch (Coqui ``STEP: 24/36``)
        inner = [i for i, _ in steps if i != glob[0] and total_of.get(i + 1) == STEP]
        if len(inner) == 1:
            cols += [(BATCHES, inner[0], "batches"), (BATCHES_TOTAL, inner[0] + 1, "batches_total")]
            del total_of[inner[0] + 1]
        return glob[0]
    inner = [i for i, _ in steps if total_of.get(i + 1) == STEP]
    outer = [i for i, _ in steps if total_of.get(i + 1) != STEP]
    if len(steps) == 2 and len(inner) == 1 and len(outer) == 1:
        cols += [(EPOCH, outer[0], "epoch"), (BATCHES, inner[0], "batches")]
        cols.append((BATCHES_TOTAL, inner[0] + 1, "batches_total"))
        del total_of[inner[0] + 1]
        return None
    return chosen


def _train_before_eval(msg: str, mark: re.Match[str] | None, cols: list[tuple[str, int, str]]) -> int | None:
    """Index of the first value an evaluation mark in mid-line applies to, when the line names its
    training loss before the mark (``Epoch 3 | Train Loss: 9.1 | Token Acc: 0.05 | Val Loss: 9.0 |
    Token Acc: 0.06``): one line holding a training row and an evaluation. None when the mark
    covers the whole line (at its start, or no training loss before it)."""
    if mark is None or mark.start() == 0:
        return None
    k = sum(1 for a, _ in value_spans(msg) if a < mark.start())
    return k if any(name == LOSS and idx < k for name, idx, _ in cols) else None


def plan_for(msg: str, fields: FieldMap) -> Plan:
    """Read one representative line and decide how all lines of its shape are read."""
    if CODE_RE.search(msg):
        return Plan("source code / config")
    cols, step_idx, total_idx = _columns(msg, fields)
    mark = EVAL_MARK_RE.search(msg)
    split = _train_before_eval(msg, mark, cols)
    marked = mark is not None and split is None
    # a ``Dev`` line beside a ``Validation`` line of the same metrics is another split: its own columns
    dev = mark is not None and mark.group().strip(" \t[|]-").lower() == "dev"
    train: dict[str, int] = {}
    evals: dict[str, int] = {}
    aliases: dict[str, str] = {}
    explicit = {name for name, _, _ in cols if is_eval_key(name)}
    for name, idx, key in cols:
        # the values the mark covers: all of the line's, or those after its split
        covered = mark is not None and (split is None or idx >= split)
        target = evals if (covered or is_eval_key(name)) else train
        col = _eval_name(name) if covered and not is_eval_key(name) else name
        col = f"dev_{name}" if dev and covered and col == name and name != EPOCH and not is_eval_key(name) else col
        if covered and col != name and col in explicit:
            continue  # "[eval] train loss X, val loss Y": the eval value is Y, not the train X
        target.setdefault(col, idx)
        if key != col and key.lower() != col:
            aliases.setdefault(key, col)
    total_key = next((k for k in TOTAL_LOSS_KEYS if k in train), None) if LOSS not in train else None
    if total_key is not None:
        train[LOSS] = train.pop(total_key)
        src = next((key for name, _, key in cols if name == total_key), total_key)
        aliases[src] = LOSS
    derived = step_idx is None and {EPOCH, BATCHES, BATCHES_TOTAL} <= train.keys()
    has_step = step_idx is not None or derived
    if step_idx is not None:
        train[STEP] = step_idx
        if evals:
            evals[STEP] = step_idx
    ppl = next((k for k in PPL_KEYS if k in train), None) if LOSS not in train else None
    # an eval record without a step is kept when it names its metric as an eval's: a marked line
    # (``Validation loss: 3.2``) or an eval key (HF Trainer's ``{'eval_loss': 6.67, 'epoch': 0.11}``)
    named = marked or bool(explicit)
    if evals and not has_step and LOSS not in train and not (named and any(_is_metric(c) for c in evals)):
        return Plan("no step", train, evals)
    if evals and (marked or (LOSS not in train and ppl is None)):
        return Plan("eval", evals=evals, total=total_idx, aliases=aliases)
    if not has_step and LOSS in train:
        # e.g. Keras' end-of-epoch line: a training row (its step comes from the batch counter)
        # whose eval values are kept as well, placed at that step
        return Plan("unstepped", train, evals, aliases=aliases)
    if not has_step:
        return Plan("no step", train, aliases=aliases)
    if LOSS not in train and ppl is None:
        return Plan("no loss value", train, total=total_idx)
    return Plan("train", train, evals, total_idx, ppl, derived, aliases)


def total_loss_keys(plan: Plan) -> list[str]:
    """The keys a plan reads as the training loss under a total-loss name (Coqui ``avg_loss``)."""
    return [k for k, v in plan.aliases.items() if v == LOSS and normalize_key(k) in TOTAL_LOSS_KEYS]
