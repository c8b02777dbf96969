"""Console tables of an epoch loop: a header row of column names, then rows of values under it whose
first column is the epoch counter ``e/N``, and a validation table (``Class Images ...`` / ``all ...``).

This is what YOLOv5's and Ultralytics' ``train.py`` print on stdout (read from their source):

- YOLOv5 v5.0 ``train.py:274`` and ``:325-327`` (``Starting training for {epochs} epochs...``: :248): the header
  ``('%10s' * 8) % ('Epoch', 'gpu_mem', 'box', 'obj', 'cls', 'total', 'labels', 'img_size')`` then, as
  the tqdm description of every batch, ``('%10s' * 2 + '%10.4g' * 6) % (f'{epoch}/{epochs - 1}', mem,
  *mloss, targets.shape[0], imgs.shape[-1])``; ``mloss`` is the epoch's running mean of the loss items
  (utils/loss.py:160-161: ``loss = lbox + lobj + lcls``, items ``(lbox, lobj, lcls, loss)``).
- YOLOv5 v6.1 ``train.py:301, 353``: the same without ``total``; v7.0 ``train.py:278, 333``: names
  ``GPU_mem box_loss obj_loss cls_loss Instances Size`` (``%11s``). The loss stepped on is the parts'
  sum (utils/loss.py:175, ``return (lbox + lobj + lcls) * bs``).
- Ultralytics 8.x ``engine/trainer.py:413-421`` (``f"{epoch + 1}/{self.epochs}"``: counted from 1) under
  ``models/yolo/detect/train.py:113-121`` (``Epoch GPU_mem box_loss cls_loss dfl_loss Instances Size``).
- The validation header (YOLOv5 val.py v6.1:176 / v7.0:190, test.py v5.0:96; Ultralytics
  ``models/yolo/detect/val.py:90``, ``segment/val.py:57``) names ``Class Images Labels|Instances`` then
  ``P R mAP@.5 mAP@.5:.95`` (``mAP50 mAP50-95``; ``Box(P ... mAP50-95)`` ``Mask(P ...)``), and the row
  ``pf % ('all', seen, nt.sum(), mp, mr, map50, map)`` holds them for all classes.

The epoch's row is the last write of its progress bar (tqdm redraws it with ``\\r``); a validation row is
the evaluation of the epoch whose row precedes it (the first one only: the final validation of the best
weights after ``epochs completed`` repeats an earlier epoch). A counter that goes back (``0/N`` after
``5/N``) is another launch of the script appended to the same file (``>> train.log``): its rows are its
own, kept beside the earlier launch's, and the run structure lists the launches. The plan is ``Starting training for N
epochs`` where printed; the counter's base (from 0 or from 1) is what makes its ``N`` the same plan.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

import polars as pl

from logdoctor.errors import ParseError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers.base import Parser, ParseResult
from logdoctor.ingest.parsers.events import scan_events
from logdoctor.ingest.parsers.lines import LINE, read_lines
from logdoctor.ingest.parsers.markers import scan_markers
from logdoctor.ingest.parsers.records import normalize_records
from logdoctor.ingest.parsers.textrules import ANSI
from logdoctor.ingest.sources import Source
from logdoctor.model import EPOCH, LINE_NO, STEP

_COUNTER = re.compile(r"^(\d+)/(\d+)$")
_MEM = re.compile(r"^\d+(?:\.\d+)?(?:[eE][-+]?\d+)?[MG]B?$")
_NUM = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^[-+]?(?:nan|inf)$", re.IGNORECASE)
_PLAN = re.compile(r"Starting training for (\d+) epochs")
_DONE = re.compile(r"\d+ epochs? completed in ")
#: The columns after the loss items: the batch's label count and the image size (``targets.shape[0],
#: imgs.shape[-1]`` in both writers), never a loss.
COUNT_COLUMNS = frozenset({"labels", "instances", "targets", "img_size", "size", "imgsz"})
#: Validation header names -> the key the writer's own CSV logger gives the value (YOLOv5
#: utils/loggers/__init__.py ``metrics/precision``...; Ultralytics ``metrics/mAP50(B)``).
EVAL_NAMES = {
    "p": "precision",
    "r": "recall",
    "map@.5": "mAP_0.5",
    "map@.5:.95": "mAP_0.5:0.95",
    "map50": "mAP50",
    "map50-95": "mAP50-95",
}
_SNIFF_BYTES = 256 * 1024
#: A line that may be the header: ``Epoch`` then a name.
_HEADER_LINE = re.compile(r"(?m)^[ \t]*Epoch[ \t]+[A-Za-z_]")


def _tokens(line: str) -> list[str]:
    """The cells of a table line, up to the progress bar (``640: 100%|...``, ``mAP@.5:.95: 100%|``)."""
    cells: list[str] = []
    for tok in line.split():
        if tok.endswith(":"):
            cells.append(tok[:-1])
            break
        if "%|" in tok:
            break
        cells.append(tok)
    return cells


def _header(cells: list[str]) -> bool:
    return len(cells) >= 4 and cells[0].lower() == "epoch" and not any(_NUM.match(c) for c in cells)


def _value_row(cells: list[str], width: int) -> bool:
    return (
        len(cells) == width
        and _COUNTER.match(cells[0]) is not None
        and all(_NUM.match(c) or _MEM.match(c) for c in cells[1:])
    )


def _train_key(name: str) -> str:
    """A training column's key: the loss items under the writer's CSV names (``train/box_loss``), the
    counts as named; ``total`` is YOLOv5 v5.0's sum of the items (``train/total_loss``)."""
    low = name.lower()
    if low in COUNT_COLUMNS:
        return low
    return f"train/{low}" if low.endswith("loss") else f"train/{low}_loss"


def _eval_keys(cells: list[str]) -> list[str] | None:
    """Keys of a validation header's metric columns (``Class Images Labels P R ...``), or None."""
    if len(cells) < 5 or cells[0] != "Class" or cells[1] != "Images":
        return None
    keys: list[str] = []
    group = ""
    for cell in cells[3:]:
        m = re.match(r"^([A-Za-z]+)\((.*)$", cell)
        if m:
            group, cell = m.group(1)[0].upper(), m.group(2)
        name = EVAL_NAMES.get(cell.rstrip(")").lower())
        if name is None:
            return None
        keys.append(f"metrics/{name}({group})" if group else f"metrics/{name}")
    return keys


#: An epoch of one launch: (the launch's number in the file, from 0; the epoch counter).
_Key = tuple[int, int]


@dataclass(slots=True)
class _Read:
    rows: dict[_Key, dict[str, float | int | None]] = field(default_factory=dict)
    evals: dict[_Key, dict[str, float | int | None]] = field(default_factory=dict)
    counters: set[tuple[int, int]] = field(default_factory=set)
    planned: int | None = None
    redraws: int = 0


def _read(lines: pl.DataFrame) -> _Read:
    out = _Read()
    header: list[str] | None = None
    eval_keys: list[str] | None = None
    epoch: int | None = None
    launch = 0
    done = False
    for no, raw in lines.select(LINE_NO, LINE).iter_rows():
        line = re.sub(ANSI, "", raw) if "\x1b" in raw else raw
        if out.planned is None and (m := _PLAN.search(line)):
            out.planned = int(m.group(1))
        if _DONE.search(line):
            done = True  # what follows validates saved weights, not an epoch
        cells = _tokens(line)
        if not cells:
            continue
        if _header(cells):
            header = cells
            continue
        if header is not None and _value_row(cells, len(header)):
            e, n = (int(x) for x in cells[0].split("/"))
            rec: dict[str, float | int | None] = {LINE_NO: int(no), EPOCH: float(e)}
            for name, cell in zip(header[1:], cells[1:], strict=True):
                if _MEM.match(cell):
                    rec[f"{name.lower()}_gb"] = float(re.sub(r"[MG]B?$", "", cell)) / (1000 if "M" in cell else 1)
                else:
                    rec[_train_key(name)] = float(cell)
            if epoch is not None and e < epoch:
                launch += 1  # the counter went back: the script was launched again into the same file
            out.redraws += (launch, e) in out.rows
            out.rows[launch, e] = rec  # the last write of the epoch's bar
            out.counters.add((e, n))
            epoch, done = e, False
            continue
        if (keys := _eval_keys(cells)) is not None:
            eval_keys = keys
            continue
        if (
            eval_keys is not None
            and epoch is not None
            and not done
            and (launch, epoch) not in out.evals
            and cells[0] == "all"
            and len(cells) == len(eval_keys) + 3
            and all(_NUM.match(c) for c in cells[1:])
        ):
            out.evals[launch, epoch] = {LINE_NO: int(no), **dict(zip(eval_keys, map(float, cells[3:]), strict=True))}
    return out


def _base(read: _Read) -> int:
    """0 when the counter counts epochs from 0 (``e/{epochs - 1}``), 1 when from 1 (``e/{epochs}``)."""
    ns = {n for _, n in read.counters}
    if any(e == 0 for e, _ in read.counters):
        return 0
    if read.planned is not None and read.planned in ns:
        return 1
    if read.planned is not None and read.planned - 1 in ns:
        return 0
    return 1 if any(e == n for e, n in read.counters) else 0


def _last_line(lines: pl.DataFrame) -> int:
    """The number of the last physical line (``\\r`` segments share their line's number)."""
    return int(lines[LINE_NO].max() or 0) if lines.height else 0  # type: ignore[arg-type]


class EpochTableParser(Parser):
    """A header ``Epoch <names>`` and rows ``e/N <values>`` under it (YOLOv5 / Ultralytics console)."""

    name = "epoch_table"
    description = "console table of an epoch loop: 'Epoch <names>' header, 'e/N <values>' rows (YOLOv5/Ultralytics)"

    def sniff(self, source: Source) -> bool:
        if source.is_dir:
            return False
        head = source.head_text(_SNIFF_BYTES)
        if _HEADER_LINE.search(head) is None:  # the cheap test first: most text logs have no such header
            return False
        header: list[str] | None = None
        for line in re.split(r"[\r\n]", re.sub(ANSI, "", head) if "\x1b" in head else head):
            cells = _tokens(line)  # a redraw may start with an erase-line code (``\r\x1b[K``): read as _read does
            if _header(cells):
                header = cells
            elif header is not None and _value_row(cells, len(header)):
                return True
        return False

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        data = source.read_bytes()
        lines = read_lines(data)
        read = _read(lines)
        if not read.rows:
            raise ParseError(f"{source.name}: no row 'e/N values' under an 'Epoch ...' header")
        base = _base(read)
        records = []
        for (_, e), rec in read.rows.items():
            records.append({**rec, STEP: e + 1 - base})
        for (_, e), ev in read.evals.items():
            records.append({**ev, STEP: e + 1 - base})
        frame = pl.DataFrame(records, infer_schema_length=None).sort(LINE_NO)
        result = normalize_records(frame, fields, source.name, _last_line(lines))
        plan_n = max(n for _, n in read.counters) + 1 - base
        planned = read.planned if read.planned is not None else plan_n
        notes = [
            "console epoch table: one row per epoch (its progress bar's last write), step = epochs done "
            f"(the counter e/N counts from {base}); 'all' validation rows are evaluations",
            *result.notes,
        ]
        skips = dict(result.skip_reasons)
        if read.redraws:
            skips["progress-bar redraw"] = read.redraws
        return dataclasses.replace(
            result,
            total_steps=planned,
            steps_per_epoch=1,
            planned_source="header" if read.planned is not None else "column",
            notes=tuple(notes),
            skip_reasons=skips,
            markers=scan_markers(lines),
            events=scan_events(lines, result.table[LINE_NO].to_numpy()),
            records_read=lines.height if lines.height > _last_line(lines) else 0,
        )
