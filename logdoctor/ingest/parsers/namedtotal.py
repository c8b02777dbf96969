"""Evaluators' results that the data cannot define (NaN or COCO's -1), made missing instead of read as a failure.

Which keys are evaluations is :mod:`logdoctor.vocab`'s decision; this module knows only which evaluators
write an undefined value, and how."""

from __future__ import annotations

import polars as pl

from logdoctor import vocab

#: COCO's summary writes -1 for an average it cannot form (no object of that size: pycocotools
#: COCOeval.summarize), which mmdet's CocoMetric keeps as -1.0.
_COCO_UNDEFINED = ("coco/", "lvis/")


def undefined_results(frame: pl.DataFrame) -> pl.DataFrame:
    """Evaluators' results with an undefined value made missing: detectron2's COCOEvaluator writes NaN
    for a metric the data cannot define (``APs`` with no small object: coco_evaluation.py:345, 349
    ``float(stats[idx] * 100 if stats[idx] >= 0 else "nan")``), mmdet's CocoMetric the -1 of COCO's
    summary; neither is a failure of the run. A NaN is undefined only where another result of the same
    task is finite in that record (the small-object AP beside a finite AP): a record whose results are all
    NaN is a broken evaluation and stays one (LD009). A result column left with no value is dropped."""
    cols = [c for c, t in frame.schema.items() if t == pl.Float64 and vocab.is_evaluator_result(c)]
    if not cols:
        return frame
    tasks: dict[str, list[str]] = {}
    for c in cols:
        tasks.setdefault(c.strip().split("/", 1)[0].lower(), []).append(c)
    for family in tasks.values():
        defined = pl.any_horizontal([pl.col(c).is_not_null() & pl.col(c).is_not_nan() for c in family])
        frame = frame.with_columns(
            pl.when(pl.col(c).is_nan() & defined).then(None).otherwise(pl.col(c)).alias(c) for c in family
        )
    coco = [c for c in cols if c.strip().lower().startswith(_COCO_UNDEFINED)]
    if coco:
        frame = frame.with_columns(pl.when(pl.col(c) == -1.0).then(None).otherwise(pl.col(c)).alias(c) for c in coco)
    return frame.drop([c for c in cols if frame[c].null_count() == frame.height])
