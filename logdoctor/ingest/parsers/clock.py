"""Elapsed wall-clock fields written as text (``"22:08:06"``, ``"1h 2m 5s"``) as seconds."""

from __future__ import annotations

import polars as pl

from logdoctor.ingest.aliases import normalize_key

#: The column the seconds go to; structure/ reads a drop of it as a restart (the clock reset).
ELAPSED_S = "elapsed_s"
_KEYS = frozenset({"elapsed_time", "elapsed", "time_elapsed", "elapsed_s"})
_HMS = r"^\s*(?:(\d+)\s*days?,\s*)?(\d+):(\d{2}):(\d{2}(?:\.\d+)?)\s*$"
_WORDS = r"^\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+(?:\.\d+)?)s)?\s*$"


def _seconds(col: pl.Expr) -> pl.Expr:
    """``[D days, ]H:MM:SS`` or ``1h 2m 5s`` -> seconds (null when neither)."""
    hms = [col.str.extract(_HMS, i).cast(pl.Float64, strict=False) for i in (1, 2, 3, 4)]
    from_hms = hms[0].fill_null(0) * 86400 + hms[1] * 3600 + hms[2] * 60 + hms[3]
    words = [col.str.extract(_WORDS, i).cast(pl.Float64, strict=False) for i in (1, 2, 3)]
    any_word = pl.any_horizontal([w.is_not_null() for w in words])
    from_words = pl.when(any_word).then(
        words[0].fill_null(0) * 3600 + words[1].fill_null(0) * 60 + words[2].fill_null(0)
    )
    return pl.coalesce(from_hms, from_words)


def elapsed_seconds(frame: pl.DataFrame) -> pl.DataFrame:
    """Replace a text elapsed-time column by ``elapsed_s`` in seconds; other frames unchanged."""
    for name, dtype in frame.schema.items():
        if dtype != pl.String or normalize_key(name) not in _KEYS:
            continue
        secs = frame.select(_seconds(pl.col(name)).alias(ELAPSED_S))[ELAPSED_S]
        if secs.drop_nulls().len() * 2 < frame[name].drop_nulls().len():
            continue
        return frame.drop(name).with_columns(secs)
    return frame
