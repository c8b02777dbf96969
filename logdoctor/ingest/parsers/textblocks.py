"""Rewrites that turn multi-line or bare metric records into one ordinary metric line each."""

from __future__ import annotations

import re

import polars as pl

from logdoctor.ingest.parsers.lines import LINE_NO
from logdoctor.ingest.parsers.metereval import fold_meter_evals
from logdoctor.ingest.parsers.screen import Lines
from logdoctor.ingest.parsers.textrules import VALUE

MSG = "msg"
#: Keras progress: ``  3/285 [>....] - ETA: 41s - loss: ...``: a per-epoch batch counter.
KERAS = r"^\s*(\d+)/(\d+) \[[=>.]*\] - [^-]* - "
#: The Keras rule's match without its groups: found, it is replaced by what ``_rule`` builds from it.
_KERAS_MATCH = r"^\s*\d+/\d+ \[[=>.]*\] - [^-]* - "
#: Keras 3 progress (``keras/src/utils/progbar.py``, verbose=1): ``3/285 ━━━━━━━━━━ 41s 146ms/step - loss: ...``,
#: its colour codes stripped (clean): the same per-epoch batch counter, drawn with box characters.
KERAS3 = r"^\s*(\d+)/(\d+) ━+ [^-]* - "
#: build-nanogpt's log.txt: ``N train X`` / ``N val X`` / ``N hella X``.
_BARE = (
    (rf"^\s*(\d+) train ({VALUE})\s*$", "step $1 | loss $2"),
    (rf"^\s*(\d+) val ({VALUE})\s*$", "eval step $1 | val_loss $2"),
    (rf"^\s*(\d+) hella ({VALUE})\s*$", "eval step $1 | hellaswag $2"),
    # tqdm/Lightning: ``Epoch 3:  34%|###4      | 50/146 [00:10<00:20, 4.80it/s, loss=1.23]``
    (
        r"^\s*(Epoch \d+):\s+\d{1,3}%\|[^|]*\|\s*(\d+)/(\d+)\s*\[[^,\]]*(?:,\s*[\d.]+\s*[a-z]+/[a-z]+)?,?\s*",
        "$1 | batches $2/$3 | ",
    ),
    # the same bar with a phase tag, ``Epoch 1 [Train]:  10%|#  | 12/115 [...]`` / ``Epoch 1 [Val]  :``:
    # the tag is kept where it names an evaluation (textrules.EVAL_MARK_RE: an eval record, issue 28)
    (
        r"^\s*(Epoch \d+) \[(?i:train|training)\]\s*:\s+\d{1,3}%\|[^|]*\|\s*(\d+)/(\d+)\s*"
        r"\[[^,\]]*(?:,\s*[\d.]+\s*[a-z]+/[a-z]+)?,?\s*",
        "$1 | batches $2/$3 | ",
    ),
    (
        r"^\s*(Epoch \d+) (\[[A-Za-z][\w -]{0,20}\])\s*:\s+\d{1,3}%\|[^|]*\|\s*(\d+)/(\d+)\s*"
        r"\[[^,\]]*(?:,\s*[\d.]+\s*[a-z]+/[a-z]+)?,?\s*",
        "$1 $2 | batches $3/$4 | ",
    ),
    # torchtune's tqdm description ``{epoch}|{step}|Loss: X:  3%|#  | 17/512 [...]`` (the global step in
    # current recipes, the batch in the epoch in early ones): the bar's count is no step (each step
    # is drawn twice, once with the next count)
    (rf"^\s*(\d+)\|(\d+)\|Loss: ({VALUE}):.*$", "epoch $1 | step $2 | loss $3"),
    (KERAS, "batches $1/$2 | "),
    (KERAS3, "batches $1/$2 | "),
    # ESPnet2 (espnet2/train/reporter.py SubReporter.log_message): ``3epoch:train:201-300batch: k=v, ...``,
    # the batch count within the epoch; Reporter.log_message: ``3epoch results: [train] k=v, ..., [valid]
    # k=v, ...``, the epoch's means: its [valid] part an evaluation, a summary of training no step
    (r"^\s*(\d+)epoch:train:\d+-(\d+)batch:\s*", "epoch $1 | step $2 | "),
    (r"^\s*(\d+)epoch results: \[train\] .*?\[valid\] ([^\[]*?)(?:,\s*\[\w+\].*)?$", "eval | epoch $1 | $2"),
    (r"^\s*(\d+)epoch results: \[train\] .*$", "epoch $1 summary of training"),
)
#: A clock duration as a block's value (HF's ``train_runtime = 17:52:38.15``, Python's timedelta
#: ``1 day, 2:03:04``): a line of the block like the others, so that the block is not cut there.
_CLOCK_VALUE = r"(?:\d+ days?, )?\d+:[0-5]\d:[0-5]\d(?:\.\d+)?"
#: An indented ``name=value`` line that belongs to the record above it (OLMo metric blocks, HF's
#: ``***** train metrics *****`` summary, whose ``train_runtime`` marks it a summary only if the
#: block holds together past its clock-valued lines).
_CONT = rf"^\s{{2,}}[A-Za-z][^=]{{0,100}}=\s*(?:{VALUE}|{_CLOCK_VALUE})\s*$"
#: An indented ``key: value`` line under a header line (Coqui ``| > loss_mel: 19.08  (19.50)``):
#: rewritten to ``key=value`` so that it joins the header; a running average in brackets is dropped.
_COLON_CONT = (
    rf"^\s{{2,}}(?:\|\s*>\s*)?([A-Za-z][\w./ -]{{0,60}}?)\s*:\s*({VALUE})"
    rf"(?:\s+\(\s*{VALUE}\s*\))?\s*$"
)
#: ``_COLON_CONT`` with the key's length unbounded: every line it matches, this matches too, and its
#: regex compiles ~10x faster (polars compiles a regex once per process; 60 repeats of ``\w`` cost
#: ~18 ms), so it is tested first.
_COLON_CONT_ANY = _COLON_CONT.replace("{0,60}?", "*?")
#: Sockeye's per-batch lines ``E=3 B=4050 s/sec=... ppl=...``: B counts batches (not updates);
#: where they exist, the ``Checkpoint [k]`` summaries are evaluation records beside them.
BATCH_LINE = r"\bE=(\d+) B=(\d+)\s"
#: Sockeye prints one checkpoint over several lines, each tagged ``Checkpoint [k]``.
_CKPT = r"Checkpoint \[(\d+)\]\s"


def rewritten(line: str) -> bool:
    """True when ``rewrite`` reads a line of this shape otherwise than as it is: a bare record, a
    progress bar, a Sockeye batch or checkpoint line, a continuation line."""
    patterns = [p for p, _ in _BARE] + [_CONT, _COLON_CONT, BATCH_LINE, _CKPT]
    return any(re.search(p, line) for p in patterns)


def bare_rules(line: str) -> tuple[tuple[str, str], ...]:
    """The rewrites of a bare record or progress bar (``(pattern, replacement)``, in the order
    ``rewrite`` applies them) that apply to ``line``."""
    return tuple((p, r) for p, r in _BARE if re.search(p, line))


def apply_rules(lines: pl.Series, rules: tuple[tuple[str, str], ...] | None = None) -> pl.Series:
    """``lines`` rewritten by ``rules`` (from bare_rules; by default every rule that may apply, see
    screen) as ``rewrite`` rewrites them."""
    if rules is None:  # a sample (textfast: 4000 lines): 8 lookups cost less than the rules' regexes
        text = Lines.of(lines, max_lines=lines.len())
        rules = tuple((p, r) for p, r in _BARE if text.may_match(p))
    if not rules:
        return lines
    frame = lines.to_frame("_l")
    for pattern, repl in rules:
        frame = frame.select(_rule(pl.col("_l"), pattern, repl).alias("_l"))
    return frame.to_series().alias(lines.name)


def _rule(text: pl.Expr, pattern: str, repl: str) -> pl.Expr:
    """``text.str.replace(pattern, repl)``. The Keras bar (on every line of a Keras log) is found by
    its match alone and rebuilt from it, ~2x cheaper than a replacement that fills in groups: its
    groups are the counter ``N/T`` that follows the leading blanks (``\\s`` and polars' strip are
    both Unicode White_Space). The result is unnamed: alias it."""
    if pattern != KERAS:
        return text.str.replace(pattern, repl)
    found = text.str.extract(_KERAS_MATCH, 0)
    counter = found.str.strip_chars_start().str.splitn(" ", 2).struct.field("field_0")
    rebuilt = pl.concat_str(pl.lit("batches "), counter, pl.lit(" | "), text.str.slice(found.str.len_chars()))
    return pl.when(found.is_not_null()).then(rebuilt).otherwise(text)


def has_blocks(lines: pl.Series) -> bool:
    """True when some of ``lines`` continue the record of a line above them (OLMo, Coqui blocks)."""
    indented = lines.filter(lines.str.contains(r"^\s\s"))
    if indented.len() == 0:  # polars compiles a regex even for no rows
        return False
    return bool(indented.str.contains(f"{_CONT}|{_COLON_CONT_ANY}").any()) and bool(
        indented.str.contains(f"{_CONT}|{_COLON_CONT}").any()
    )


def rewrite(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Apply every rewrite; returns the frame and how many lines were folded into another."""
    msg = pl.col(MSG)
    lines = Lines.of(frame[MSG])  # most rules cannot apply: their literals are missing (screen)
    for pattern, repl in _BARE:
        if lines.contains(frame[MSG], pattern):
            frame = frame.with_columns(_rule(msg, pattern, repl).alias(MSG))
            lines = Lines.of(frame[MSG])
    indented = frame.filter(msg.str.contains(r"^\s\s"))  # cheap test first: the regex is costly
    if (
        indented.height
        and indented[MSG].str.contains(_COLON_CONT_ANY).any()
        and indented[MSG].str.contains(_COLON_CONT).any()
    ):
        frame = frame.with_columns(msg.str.replace(_COLON_CONT, "    ${1}=${2}"))
        lines = Lines.of(frame[MSG])
    if lines.contains(frame[MSG], BATCH_LINE):
        frame = frame.with_columns(
            msg.str.replace(BATCH_LINE, "epoch=${1} | step=${2} | ").str.replace(_CKPT, "eval Checkpoint [${1}] ")
        )
    frame, folded_coco = _join_coco(frame) if Lines.of(frame[MSG]).may_match(_COCO_LITERAL) else (frame, 0)
    frame, folded = _join_blocks(frame)
    frame, folded_meter = fold_meter_evals(frame, MSG)
    folded += folded_coco + folded_meter
    frame, folded_ckpt = _join_checkpoints(frame) if Lines.of(frame[MSG]).may_match(_CKPT) else (frame, 0)
    return frame, folded + folded_ckpt


def _join_blocks(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Append each run of indented ``name=value`` lines to the line that heads it."""
    cont = frame[MSG].str.contains(_CONT)
    if not cont.any():
        return frame, 0
    frame = frame.with_columns(cont.alias("_cont")).with_columns((~pl.col("_cont")).cum_sum().alias("_block"))
    tails = (
        frame.filter(pl.col("_cont"))
        .group_by("_block", maintain_order=True)
        .agg(pl.col(MSG).str.strip_chars().str.join(" | ").alias("_tail"))
    )
    heads = frame.filter(~pl.col("_cont")).join(tails, on="_block", how="left")
    heads = heads.with_columns(
        pl.when(pl.col("_tail").is_not_null())
        .then(pl.concat_str(pl.col(MSG), pl.lit(" | "), pl.col("_tail")))
        .otherwise(pl.col(MSG))
        .alias(MSG)
    )
    return heads.drop("_cont", "_block", "_tail"), int(cont.sum())


#: pycocotools' COCOeval.summarize() (cocoeval.py ``_summarize``: ``' {:<18} {} @[ IoU={:<9} | area={:>6s} |
#: maxDets={:>3d} ] = {:0.3f}'``), printed by every framework that evaluates on COCO (PaddleDetection,
#: detectron2, MMDetection, torchvision's references, YOLOv5 with --save-json): twelve lines per evaluation.
_COCO = re.compile(
    r"^\s*Average (Precision|Recall)\s+\((?:AP|AR)\) @\[ IoU=([\d.:]+)\s*\| area=\s*(\w+) \| "
    r"maxDets=\s*(\d+) \] = (-?[\d.]+)\s*$"
)
_COCO_LITERAL = "maxDets="
#: ``Evaluate annotation type *bbox*`` (COCOeval.evaluate): the iou type of the summary that follows.
_COCO_TYPE = re.compile(r"Evaluate annotation type \*(\w+)\*")
#: The AP lines' names, as MMDetection's CocoMetric names them (``coco/bbox_mAP``, ``_mAP_50``...).
_COCO_AP = {
    ("0.50:0.95", "all"): "mAP",
    ("0.50", "all"): "mAP_50",
    ("0.75", "all"): "mAP_75",
    ("0.50:0.95", "small"): "mAP_s",
    ("0.50:0.95", "medium"): "mAP_m",
    ("0.50:0.95", "large"): "mAP_l",
}


def _join_coco(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Each pycocotools summary (its consecutive ``Average Precision/Recall ... = v`` lines) becomes one
    evaluation line at its first line, ``eval | coco/bbox_mAP: 0.22 | coco/bbox_mAP_50: 0.46 | ...``
    (the AP lines; -1, pycocotools' "no such objects", is nan); its other lines are folded into it."""
    msgs = frame[MSG].to_list()
    out = list(msgs)
    kind, folded, head = "bbox", 0, None
    values: dict[str, str] = {}

    def close() -> None:
        if head is not None and values:
            out[head] = "eval | " + " | ".join(f"coco/{kind}_{k}: {v}" for k, v in values.items())

    for i, msg in enumerate(msgs):
        if (t := _COCO_TYPE.search(msg)) is not None:
            kind = t.group(1)
        m = _COCO.match(msg)
        if m is None:
            close()
            head, values = None, {}
            continue
        if head is None:
            head = i
        else:
            out[i] = ""
            folded += 1
        name = _COCO_AP.get((m.group(2), m.group(3))) if m.group(1) == "Precision" else None
        if name is not None:
            values[name] = "nan" if float(m.group(5)) < 0 else m.group(5)
    close()
    if not folded and head is None and out == msgs:
        return frame, 0
    return frame.with_columns(pl.Series(MSG, out, dtype=pl.String)), folded


def _join_checkpoints(frame: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Join the lines of one Sockeye checkpoint (same ``Checkpoint [k]``) into the first one."""
    ckpt = frame[MSG].str.extract(_CKPT, 1)
    if ckpt.null_count() == frame.height:
        return frame, 0
    frame = frame.with_columns(ckpt.alias("_ckpt"))
    joined = (
        frame.filter(pl.col("_ckpt").is_not_null())
        .group_by("_ckpt", maintain_order=True)
        .agg(pl.col(LINE_NO).first(), pl.col(MSG).str.join(" | "), pl.exclude(LINE_NO, MSG).first())
    )
    rest = frame.filter(pl.col("_ckpt").is_null())
    out = pl.concat([rest, joined.select(rest.columns)]).sort(LINE_NO).drop("_ckpt")
    return out, frame.height - out.height
