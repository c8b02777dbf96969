"""The plan of a run folder's table: the arguments file its trainer writes beside ``results.csv``/``results.txt``.

A per-epoch table states no plan. The trainers that write these tables save their arguments in the same
folder when training starts:

- Ultralytics (YOLOv8+) ``engine/trainer.py:116`` (8.3.0: ``yaml_save(self.save_dir / "args.yaml",
  vars(self.args))`` in ``BaseTrainer.__init__``): ``epochs: N``, ``patience: P`` (EarlyStopping,
  ``utils/torch_utils.py:707-712``), ``time:`` (hours; when set it replaces ``epochs`` as the plan);
- YOLOv5 ``train.py`` (v5.0:56-57 ``yaml.dump``, v6.1:89-90 ``yaml.safe_dump(vars(opt), f)`` into
  ``save_dir / 'opt.yaml'``; v7.0:90 ``yaml_save(save_dir / 'opt.yaml', vars(opt))``): ``epochs: N``,
  ``patience: P`` (v6.0+).

Only the table's own folder is looked in, only these writer-named files, read-only and at most
``MAX_BYTES``; top-level ``key: value`` lines are read without a YAML library (no dependency). A file
that holds no such lines, or an ``epochs`` that is not a positive integer, is ignored with a notice.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from logdoctor.ingest.parsers.base import ParseResult

#: The tables whose folder is looked in (the writers' own file names).
TABLES = frozenset({"results.csv", "results.txt"})
#: The arguments files, in the order they are tried.
SIDECARS = ("args.yaml", "opt.yaml")
#: A larger file is no arguments dump (Ultralytics' args.yaml is ~2 KB, YOLOv5's opt.yaml ~1 KB).
MAX_BYTES = 64 * 1024
_LINE = re.compile(r"^([A-Za-z_][\w-]*):[ \t]*(.*?)[ \t]*$")
_NULL = frozenset({"", "null", "~", "none", "false"})


@dataclasses.dataclass(frozen=True, slots=True)
class SidecarPlan:
    """What an arguments file states: planned epochs, patience, and the notice for the report."""

    epochs: int | None
    patience: int | None
    #: the file's name (RunStructure.planned_source / planned_epochs_source)
    source: str
    note: str


def _keys(text: str) -> dict[str, str]:
    """Top-level ``key: value`` pairs (indented lines belong to a nested value and are not read)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            out.setdefault(m.group(1), m.group(2).strip("'\""))
    return out


def _positive(value: str | None) -> int | None:
    if value is None or not re.fullmatch(r"\d+", value):
        return None
    return int(value) or None


def read_sidecar(log: Path) -> SidecarPlan | None:
    """The plan the arguments file beside ``log`` states; None when ``log`` is no writer's table or
    its folder holds no arguments file. A file that cannot be read as one gives a plan of None with
    the notice that says so."""
    if log.name not in TABLES:
        return None
    for name in SIDECARS:
        path = log.parent / name
        if not path.is_file():
            continue
        try:
            if path.stat().st_size > MAX_BYTES:
                return SidecarPlan(None, None, name, f"{name} beside the log is over {MAX_BYTES // 1024} KiB: not read")
            keys = _keys(path.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError):
            return SidecarPlan(None, None, name, f"{name} beside the log could not be read as text: ignored")
        epochs, patience = _positive(keys.get("epochs")), _positive(keys.get("patience"))
        if epochs is None:
            return SidecarPlan(None, None, name, f"{name} beside the log states no 'epochs: N': ignored")
        if keys.get("time", "").lower() not in _NULL:
            return SidecarPlan(
                None, None, name, f"{name} beside the log plans by time (time: {keys['time']}), not epochs"
            )
        said = f"epochs {epochs}" + (f", patience {patience}" if patience else "")
        return SidecarPlan(epochs, patience, name, f"the run's plan from {name} beside the log: {said}")
    return None


def with_sidecar_plan(result: ParseResult, log: Path | None) -> ParseResult:
    """``result`` with the planned epochs and patience of the arguments file beside ``log`` where the
    log itself states none, and the notice that says where they came from."""
    plan = read_sidecar(log) if log is not None else None
    if plan is None:
        return result
    notes = (*result.notes, plan.note)
    m = result.markers
    if plan.epochs is None or m.epochs_planned is not None:
        return dataclasses.replace(result, notes=notes)
    markers = dataclasses.replace(
        m,
        epochs_planned=plan.epochs,
        epochs_planned_source=plan.source,
        patience=m.patience if m.patience is not None else plan.patience,
    )
    return dataclasses.replace(result, markers=markers, notes=notes)
