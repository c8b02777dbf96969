"""The plan a structured log states in a config dump held as text in one of its records.

MMDetection 2.x ``*.log.json`` opens with a meta record whose ``config`` value is the whole config
file as text (mmdet apis/train.py ``meta['config'] = cfg.pretty_text``; mmcv TextLoggerHook
``before_run`` dumps ``runner.meta`` as the first JSON line): its ``max_epochs=12`` /
``total_epochs = 12`` / ``max_iters=...`` is the run's plan, read with the same patterns as a text
log's config dump (markers.py).
"""

from __future__ import annotations

import polars as pl

from logdoctor.ingest.parsers.lines import LINE, LINE_NO
from logdoctor.ingest.parsers.markers import Markers, scan_markers

#: A string value is a config dump when it spans at least this many lines.
MIN_LINES = 3


def dump_texts(records: pl.DataFrame) -> list[str]:
    """The multi-line string values of ``records`` (a config dump), in record order."""
    out: list[str] = []
    for name, dtype in records.schema.items():
        if dtype != pl.String or name == LINE_NO:
            continue
        col = records[name].drop_nulls()
        out += [v for v in col.filter(col.str.count_matches("\n") >= MIN_LINES - 1).to_list()]
    return out


def config_markers(texts: list[str]) -> Markers:
    """The planned epochs, planned steps and patience the dumps state (nothing else: a dump holds no
    epoch banners or resume lines of the run)."""
    lines = [ln for t in texts for ln in t.splitlines()]
    if not lines:
        return Markers()
    frame = pl.DataFrame({LINE_NO: pl.Series(range(1, len(lines) + 1), dtype=pl.Int64), LINE: lines})
    m = scan_markers(frame)
    stated = m.epochs_planned if m.epochs_planned_source == "config" else None
    return Markers(
        epochs_planned=stated,
        epochs_planned_source="config" if stated else None,
        config_planned=m.config_planned,
        patience=m.patience,
    )
