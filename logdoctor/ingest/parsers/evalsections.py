"""Evaluation sections: a banner line (``***** Evaluating perplexity *****``) announces that the
metric line printed after it is an evaluation's result, whatever that line's own words say."""

from __future__ import annotations

import re

import polars as pl

from logdoctor import vocab
from logdoctor.ingest.parsers.lines import LINE_NO
from logdoctor.ingest.parsers.screen import Lines
from logdoctor.ingest.parsers.textblocks import MSG
from logdoctor.ingest.parsers.textrules import EVAL_MARK_RE

_WORD = r"(?:running\s+|starting\s+|start\s+)?(?:evaluating|evaluation|validating|validation|eval|testing)\b"
#: A banner: decoration on both sides of an evaluation word (``***** Evaluating perplexity, Epoch
#: 1/2 *****``, ``==== Running Evaluation ====``), or a line of words alone that starts with one
#: (``Evaluating...``, ``Running validation``). ``validation:`` (a config key) and ``eval 'echo'``
#: (shell) are no banners: the plain form has no digits, colon or quote and needs an -ing/-ion word.
HEADER = re.compile(
    rf"(?i)^\s*(?:[*=#~-]{{3,}}\s*{_WORD}[^:=\n]*?[*=#~-]{{3,}}"
    rf"|(?:running\s+|starting\s+)?(?:evaluating|evaluation|validating|validation)\b[^\d:=|'\"\n]*)[ \t]*$"
)
#: A metric with its value (``'ppl': 61.8``, ``loss 3.2``, ``acc=0.91``).
METRIC = re.compile(
    r"(?i)\b\w*(?:loss|ppl|perplexity|acc|accuracy|bleu|wer|cer|f1|rouge\w*)\b['\"]?\s*[:=]?\s*[-+]?(?:\d|\.\d|nan|inf)"
)
#: A result line that names its split in OpenMMLab's way (``Epoch(val) [10][6/6]  coco/AP: ...``,
#: ``Iter(test) [...]``): the banner's result even when no metric of :data:`METRIC` is in it.
SPLIT_RESULT = re.compile(r"\b(?:Epoch|Iter)\((?:val|test)\)\s*\[")
#: The result follows its banner within this many lines (tqdm bars and ``Num examples = N`` between).
WITHIN = 20
#: The word put before a result line so that it is read as an evaluation (textrules.EVAL_MARK_RE).
MARK = "eval | "


def mark_eval_sections(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Prefix :data:`MARK` to the first metric line after each evaluation banner (within
    :data:`WITHIN` lines, before the next banner); returns the frame and how many lines were marked."""
    if not has_banner(frame):
        return frame, 0
    msgs = frame[MSG].to_list()
    nos = frame[LINE_NO].to_list()
    marked: set[int] = set()
    open_at: int | None = None  # line number of the banner whose result is still to come
    for i, msg in enumerate(msgs):
        if HEADER.match(msg):
            open_at = nos[i]
        elif open_at is not None and nos[i] - open_at > WITHIN:
            open_at = None
        elif open_at is not None and SPLIT_RESULT.search(msg):
            open_at = None  # the result, already an evaluation by its own words
        elif open_at is not None and METRIC.search(msg):
            if not EVAL_MARK_RE.search(msg):
                marked.add(i)
            open_at = None
    if not marked:
        return frame, 0
    flag = pl.Series([i in marked for i in range(frame.height)])
    out = frame.with_columns(pl.when(flag).then(pl.lit(MARK) + pl.col(MSG)).otherwise(pl.col(MSG)).alias(MSG))
    return out, len(marked)


def has_banner(frame: pl.DataFrame) -> bool:
    """True when cleaned lines (column ``msg``) hold an evaluation banner."""
    if frame.height == 0 or not Lines.of(frame[MSG]).may_match(HEADER.pattern):
        return False
    return bool(frame[MSG].str.contains(HEADER.pattern).any())


def eval_loss_columns(columns: list[str]) -> list[str]:
    """Evaluation columns that can stand for the loss of a log that prints no training loss, best
    first: as the vocabulary ranks them (:func:`logdoctor.vocab.eval_loss_rank`), then a perplexity
    that names no split (a text log's ``[eval] ppl``)."""
    ranked = sorted((rank, c) for c in columns if (rank := vocab.eval_loss_rank(c)) is not None)
    bare = [c for c in columns if c in vocab.PERPLEXITY]
    return [c for _, c in ranked] + bare


#: At least this many stepped evaluations make a curve worth analysing.
MIN_EVALS = 3


def eval_only_curve(evals: pl.DataFrame) -> tuple[pl.DataFrame, str] | None:
    """The curve of a log that prints evaluations only (no training loss anywhere): its stepped
    evaluation records with ``loss`` = the eval loss (or ln of the eval perplexity), and the note
    that says so; None when there is no such curve."""
    if "step" not in evals.columns:
        return None
    for name in eval_loss_columns(evals.columns):
        is_ppl = vocab.classify(name).is_perplexity
        rows = evals.filter(pl.col("step").is_not_null() & pl.col(name).is_not_null())
        if rows.height < MIN_EVALS:
            continue
        value = pl.col(name).cast(pl.Float64)
        rows = rows.with_columns((value.log() if is_ppl else value).alias("loss"))
        how = f"ln of the eval `{name}`" if is_ppl else f"the eval `{name}`"
        note = (
            f"the log prints no training loss: the curve analysed is {how} at its {rows.height} "
            "evaluations (every finding's 'loss' is that evaluation loss)"
        )
        return rows, note
    return None
