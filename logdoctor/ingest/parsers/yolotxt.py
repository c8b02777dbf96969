"""YOLOv5 ``results.txt``: one headerless row per epoch, columns fixed by the writer's train.py.

The row is the progress-bar string of the epoch's last batch plus the validation results
(ultralytics/yolov5 train.py before the CSV logger, commit efe60b5^: lines 349-350 and 392-393;
the same layout since the first commit 1e84a23, train.py:275 and 305)::

    s = ('%10s' * 2 + '%10.4g' * 6) % (f'{epoch}/{epochs - 1}', mem, *mloss, targets.shape[0], imgsz)
    f.write(s + '%10.4g' * 7 % results + '\\n')  # P, R, mAP@.5, mAP@.5-.95, val_loss(box, obj, cls)

``mloss`` is the epoch's running mean of (box, obj, cls, total) where total is the loss the
optimizer stepped on (utils/loss.py returns ``loss * bs`` and ``cat((lbox, lobj, lcls, loss))``);
yolov5's own plotter reads the columns back the same way (utils/plots.py ``plot_results``:
``usecols=[2, 3, 4, 8, 9, 12, 13, 14, 10, 11]``). The yolodet fork (qixuxiang/yoloall,
yolodet/api/train.py:75, 264-265, 316) adds the batch counter ``i/n`` after the memory and the lr
before the image size: 17 columns. ``results`` starts as zeros and stays so on an epoch that ran no
validation (``--notest``): such a row carries no evaluation.

The validation loss is written only as its parts (``results`` ends with test.py's ``loss[:3]``: box,
obj, cls from the same ComputeLoss): its total, ``val_loss``, is their sum, as the training total
is the sum of the training parts (the results.csv of later versions is read the same way, by
:func:`~logdoctor.ingest.parsers.objective.summed_eval_parts`).
"""

from __future__ import annotations

import re

import polars as pl

from logdoctor.errors import ParseError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers.base import Parser, ParseResult
from logdoctor.ingest.sources import Source
from logdoctor.model import EPOCH, LINE_NO, LOSS, LR, STEP

_EPOCH = re.compile(r"^(\d+)/(\d+)$")
_MEM = re.compile(r"^\d+(?:\.\d+)?(?:[eE][-+]?\d+)?G$")
_NUM = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^[-+]?(?:nan|inf)$", re.IGNORECASE)

#: The validation results written after the progress string, in order (train.py's comment), under
#: the names yolov5's CSV logger gives them (utils/loggers/__init__.py ``keys``).
EVAL_COLUMNS: tuple[str, ...] = (
    "metrics_precision",
    "metrics_recall",
    "metrics_map_0_5",
    "metrics_map_0_5_0_95",
    "val_box_loss",
    "val_obj_loss",
    "val_cls_loss",
)
#: The parts of the validation loss, summed into ``val_loss`` as the trainer sums the training parts.
VAL_PARTS: tuple[str, ...] = ("val_box_loss", "val_obj_loss", "val_cls_loss")
#: Training columns of each layout after the ``e/N`` and memory tokens (``None``: a token not kept).
LAYOUTS: dict[int, tuple[str | None, ...]] = {
    15: ("box_loss", "obj_loss", "cls_loss", LOSS, "labels", "img_size"),
    17: (None, "box_loss", "obj_loss", "cls_loss", LOSS, "labels", LR, "img_size"),
}


def _row(tokens: list[str]) -> bool:
    """True when ``tokens`` are one results.txt row of a known layout."""
    layout = LAYOUTS.get(len(tokens))
    if layout is None or not _EPOCH.match(tokens[0]) or not _MEM.match(tokens[1]):
        return False
    rest = tokens[2:]
    if layout[0] is None:  # yolodet: the batch counter ``i/n``
        if not _EPOCH.match(rest[0]):
            return False
        rest = rest[1:]
    return all(_NUM.match(t) for t in rest)


class YoloResultsParser(Parser):
    """Headerless whitespace rows ``e/N  memG  box obj cls total labels img_size P R mAP mAP vbox vobj vcls``."""

    name = "yolov5_results"
    description = "YOLOv5 results.txt (headerless rows: epoch e/N, gpu_mem, losses, P, R, mAP, val losses)"

    def sniff(self, source: Source) -> bool:
        if source.is_dir:
            return False
        lines = [ln.split() for ln in source.head_text().splitlines() if ln.strip()][:30]
        if len(source.head_bytes()) >= 64 * 1024 and len(lines) > 1:
            lines = lines[:-1]  # the head may cut the last line
        return bool(lines) and all(_row(t) for t in lines)

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        text = source.read_bytes().decode("utf-8", errors="replace")
        records: list[dict[str, float | int | None]] = []
        skipped = 0
        planned: int | None = None
        for no, line in enumerate(text.splitlines(), start=1):
            tokens = line.split()
            if not tokens:
                continue
            if not _row(tokens):
                skipped += 1
                continue
            records.append(_record(tokens, no))
            planned = int(tokens[0].split("/")[1]) + 1  # ``e/N`` counts epochs 0..N
        if not records:
            raise ParseError(f"{source.name}: no YOLOv5 results.txt row (e/N, memory, losses, results)")
        frame = pl.DataFrame(records, infer_schema_length=None)
        return _result(frame, text.count("\n") + (not text.endswith("\n")), skipped, planned)


def _record(tokens: list[str], line_no: int) -> dict[str, float | int | None]:
    """One row's values by column name: ``epoch`` as written (0-based), ``step`` the epochs done."""
    epoch = int(tokens[0].split("/")[0])
    rec: dict[str, float | int | None] = {STEP: epoch + 1, LINE_NO: line_no, EPOCH: float(epoch)}
    rec["gpu_mem_gb"] = float(tokens[1][:-1])
    layout = LAYOUTS[len(tokens)]
    values = tokens[2 : 2 + len(layout)]
    for name, tok in zip(layout, values, strict=True):
        if name is not None:
            rec[name] = float(tok)
    for name, tok in zip(EVAL_COLUMNS, tokens[2 + len(layout) :], strict=True):
        rec[name] = float(tok)
    return rec


def _result(frame: pl.DataFrame, lines: int, skipped: int, planned: int | None) -> ParseResult:
    """The ParseResult: epochs are the steps (one per epoch), rows with results are evaluations."""
    evaluated = pl.any_horizontal([pl.col(c) != 0 for c in EVAL_COLUMNS])
    evals = frame.filter(evaluated).select(STEP, LINE_NO, *EVAL_COLUMNS)
    evals = evals.with_columns(pl.sum_horizontal(*VAL_PARTS).alias("val_loss"))
    table = frame.drop(EVAL_COLUMNS).with_columns(pl.col(STEP).cast(pl.Int64), pl.col(LINE_NO).cast(pl.Int64))
    notes = ["YOLOv5 results.txt: one row per epoch; step = epochs done (the row's e/N counts from 0)"]
    if evals.height:
        shown = " + ".join(f"`{p}`" for p in VAL_PARTS)
        notes.append(f"the eval loss `val_loss` analysed is the sum of its parts {shown}")
    if evals.height < frame.height:
        notes.append(f"{frame.height - evals.height} of {frame.height} rows ran no validation (results all 0)")
    return ParseResult(
        table=table,
        evals=evals.with_columns(pl.col(STEP).cast(pl.Int64), pl.col(LINE_NO).cast(pl.Int64)),
        lines_read=lines,
        skip_reasons={"not a results.txt row": skipped} if skipped else {},
        # the last row's ``e/N``: N + 1 epochs planned, one step (row) each
        total_steps=planned,
        steps_per_epoch=1,
        planned_source="column",
        notes=tuple(notes),
        keys_seen=tuple(c for c in frame.columns if c != LINE_NO),
    )
