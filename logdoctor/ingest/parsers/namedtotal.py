"""Records whose training loss is a named total (detectron2 ``total_loss``), and evaluators' result keys."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable

import polars as pl

from logdoctor.ingest.aliases import FieldMap, normalize_key
from logdoctor.ingest.parsers.textplan import TOTAL_LOSS_KEYS
from logdoctor.model import LOSS

#: Key prefixes of detectron2's evaluation results: ``flatten_results_dict`` (evaluation/testing.py)
#: writes ``{task}/{metric}`` for the tasks its evaluators return (coco_evaluation.py ``bbox``,
#: ``segm``, ``keypoints``; sem_seg_evaluation.py ``sem_seg``; panoptic_evaluation.py
#: ``panoptic_seg``), put into the event storage by hooks.py EvalHook and written by JSONWriter.
#: MMEngine evaluators write ``{prefix}/{metric}`` (mmengine/evaluator/metric.py:134-137), the prefix
#: being each metric class's ``default_prefix``: mmdet/mmpose CocoMetric ``coco``, VOCMetric
#: ``pascal_voc``, LVISMetric ``lvis``, CityScapesMetric ``cityscapes``, mmpretrain Accuracy
#: ``accuracy``, SingleLabelMetric ``single-label``, MultiLabelMetric ``multi-label``; LoggerHook
#: writes them into ``vis_data/scalars.json`` after each validation (hooks/logger_hook.py:265).
RESULT_PREFIXES: tuple[str, ...] = (
    "bbox/", "segm/", "keypoints/", "sem_seg/", "panoptic_seg/",
    "coco/", "pascal_voc/", "lvis/", "cityscapes/", "accuracy/", "single-label/", "multi-label/",
)  # fmt: skip
#: COCO's summary writes -1 for an average it cannot form (no object of that size: pycocotools
#: COCOeval.summarize), which mmdet's CocoMetric keeps as -1.0.
_COCO_UNDEFINED = ("coco/", "lvis/")
#: YOLO's validation results in ``results.csv``: yolov5 utils/loggers/__init__.py ``keys``
#: (``metrics/precision``, ``metrics/recall``, ``metrics/mAP_0.5``, ``metrics/mAP_0.5:0.95``) and
#: ultralytics DetMetrics/SegmentMetrics/PoseMetrics ``keys`` (``metrics/mAP50(B)``,
#: ``metrics/precision(M)``...), all computed by the validator after each epoch.
YOLO_RESULTS = re.compile(r"^metrics/(?:precision|recall|map)", re.IGNORECASE)


def is_result_key(key: str) -> bool:
    """True for an evaluator's result key: detectron2's ``task/metric`` (``bbox/AP``, ``segm/AP50``)
    or YOLO's ``metrics/mAP50(B)``."""
    k = key.strip()
    return k.lower().startswith(RESULT_PREFIXES) or YOLO_RESULTS.match(k) is not None


def undefined_results(frame: pl.DataFrame) -> pl.DataFrame:
    """Evaluators' results with an undefined value made missing: detectron2's COCOEvaluator writes NaN
    for a metric the data cannot define (``APs`` with no small object: coco_evaluation.py:345, 349
    ``float(stats[idx] * 100 if stats[idx] >= 0 else "nan")``), mmdet's CocoMetric the -1 of COCO's
    summary; neither is a failure of the run. A result column left with no value is dropped."""
    cols = [c for c, t in frame.schema.items() if t == pl.Float64 and c.strip().lower().startswith(RESULT_PREFIXES)]
    if not cols:
        return frame
    frame = frame.with_columns(pl.col(cols).fill_nan(None))
    coco = [c for c in cols if c.strip().lower().startswith(_COCO_UNDEFINED)]
    if coco:
        frame = frame.with_columns(pl.when(pl.col(c) == -1.0).then(None).otherwise(pl.col(c)).alias(c) for c in coco)
    return frame.drop([c for c in cols if frame[c].null_count() == frame.height])


def named_total(
    keys: Iterable[str], fields: FieldMap, resolve: Callable[[str, FieldMap], str]
) -> tuple[FieldMap, str | None]:
    """``fields`` with ``loss`` mapped to the field named as the total loss, and that field.

    Only when no field resolves to the loss (``resolve(key, fields) == "loss"``) and the user named
    none (``--map loss=...``); a total among several (``total_loss`` and ``loss_total``) is taken in
    ``TOTAL_LOSS_KEYS`` order. Parts (``loss_cls``, ``loss_mask``) are never picked.
    """
    keys = list(keys)
    if LOSS in fields.overrides:
        return fields, None
    if any(resolve(k, fields) == LOSS for k in keys):
        return fields, None
    by_norm = {normalize_key(k): k for k in keys}
    for name in TOTAL_LOSS_KEYS:
        if name in by_norm:
            picked = by_norm[name]
            return dataclasses.replace(fields, overrides={**fields.overrides, LOSS: picked}), picked
    return fields, None
