"""AverageMeter evaluation progress: the lines of one evaluation pass become one evaluation record.

The meter loops print their evaluation as progress lines, one per logged batch of the pass, each with
every metric's current batch value and its running average in brackets: timm's ``train.py`` validate()
(``Test: [{batch_idx:>4d}/{last_idx}]  Time: ...  Loss: {val:>7.3f} ({avg:>6.3f})  Acc@1: ...``, the last
batch always printed; ``Test (EMA): [...]`` for the EMA weights), pytorch/examples imagenet/main.py's
ProgressMeter (``Test: [ 50/196]\\tLoss 1.2e+00 (1.3e+00)``) and torchvision references' MetricLogger
(``Test:  [ 50/196]  ... loss: 1.2 (1.3)``: the window's median, then the global average). The pass's
result is the running average on its last printed line; a batch's own value is no evaluation (three
logged batches of one pass were read as three evaluations, each at its batch's value).
"""

from __future__ import annotations

import re

import polars as pl

from logdoctor.ingest.parsers.screen import Lines
from logdoctor.ingest.parsers.textrules import VALUE

#: The phase and the batch of the pass in brackets at the line's start: ``Test: [  12/196]``, ``Test (EMA):
#: [...]``, ``Test:  [...]``, ``Val: [...]``; then a value with its running average, ``1.2 (1.3)``.
METER_EVAL = (
    rf"^\s*((?:Test|Val|Valid|Validation|Eval)(?: \([\w -]{{1,20}}\))?:)\s*\[\s*(\d+)\s*/\s*(\d+)\s*\]"
    rf".*?{VALUE}\s+\(\s*{VALUE}\s*\)"
)
_METER_EVAL_RE = re.compile(METER_EVAL)
#: A value followed by its running average: kept is the average.
_WITH_AVG = re.compile(rf"({VALUE})\s+\(\s*({VALUE})\s*\)")


def fold_meter_evals(frame: pl.DataFrame, msg: str) -> tuple[pl.DataFrame, int]:
    """Keep the last progress line of each evaluation pass (column ``msg``), its values replaced by their
    running averages; the pass's earlier lines are emptied. A pass is a run of progress lines of one
    phase whose batch index rises (a new pass starts at a lower index); returns the frame and how many
    lines were folded into the last."""
    if frame.height == 0 or not Lines.of(frame[msg]).may_match(METER_EVAL):
        return frame, 0
    hits = frame[msg].str.contains(METER_EVAL)
    if not hits.any():
        return frame, 0
    out = frame[msg].to_list()
    last: tuple[str, int, int, int] | None = None  # phase, batch index, total, row of the pass's line
    folded = 0
    for i in hits.arg_true().to_list():
        m = _METER_EVAL_RE.match(out[i])
        if m is None:  # polars and Python agree on this syntax; kept for the type checker
            continue
        phase, idx, total = m.group(1), int(m.group(2)), int(m.group(3))
        if last is not None and last[0] == phase and last[2] == total and idx > last[1]:
            out[last[3]] = ""
            folded += 1
        last = (phase, idx, total, i)
        out[i] = _WITH_AVG.sub(r"\2", out[i])
    return frame.with_columns(pl.Series(msg, out, dtype=pl.String)), folded
