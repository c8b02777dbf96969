"""The walk as a Run: the rows a log written by ``logdoctor.emit`` would hold, without a loss."""

from __future__ import annotations

import polars as pl

from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.model import (
    BATCH_FP,
    EPOCH,
    LEN_MAX,
    LEN_MEAN,
    LEN_MIN,
    LINE_NO,
    LOSS,
    MICRO_FP,
    PAD_FRAC,
    SEQS,
    STEP,
    TOKENS,
    Run,
)
from logdoctor.probing.walk import Walked
from logdoctor.structure.build import build_run

#: The name of the format, as a parser's: what ``source.format`` says in a probe's report.
FORMAT = "probe"
#: emit's record key -> the run's column
_COLUMNS = {
    "n_seq": SEQS,
    "tokens": TOKENS,
    "len_mean": LEN_MEAN,
    "len_min": LEN_MIN,
    "len_max": LEN_MAX,
    "pad_frac": PAD_FRAC,
}


def parse_result(walked: Walked) -> ParseResult:
    """The walked steps as a parser's rows: one per optimizer step, numbered from 1, with the
    epoch, the batch statistics and fingerprints; the loss is null (no model ran)."""
    n = walked.steps
    data: dict[str, pl.Series] = {
        STEP: pl.Series(STEP, range(1, n + 1), dtype=pl.Int64),
        LOSS: pl.Series(LOSS, [None] * n, dtype=pl.Float64),
        LINE_NO: pl.Series(LINE_NO, range(1, n + 1), dtype=pl.Int64),
        EPOCH: pl.Series(EPOCH, walked.epoch, dtype=pl.Int64).cast(pl.Float64),
    }
    for key, col in _COLUMNS.items():
        series = pl.Series(col, walked.cols[key], dtype=pl.Float64)
        if series.is_nan().all():  # no lengths: only the batch size and the fingerprint
            continue
        data[col] = series
    data[BATCH_FP] = pl.Series(BATCH_FP, walked.batch_fp, dtype=pl.String)
    if any(fp is not None for fp in walked.micro_fp):
        data[MICRO_FP] = pl.Series(MICRO_FP, walked.micro_fp, dtype=pl.String)
    return ParseResult(table=pl.DataFrame(data), lines_read=n, steps_per_epoch=_epoch_steps(walked))


def _epoch_steps(walked: Walked) -> int | None:
    """Steps in the first epoch, when it ended (the walk is the epochs' own account, not an inference)."""
    if walked.epochs < 2 and (walked.bounded or walked.one_shot):
        return None
    return walked.epoch.count(0) or None


def to_run(walked: Walked, name: str) -> Run:
    """The Run of a walk, with its structure resolved as any log's is (epochs from the epoch column).

    Raises:
        ParseError: the walk recorded no batch.
    """
    return build_run(parse_result(walked), name, FORMAT)
