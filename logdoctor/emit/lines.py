"""Write training steps in logdoctor's canonical text line and as JSON lines."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from logdoctor.emit.keys import BATCH_KEYS

_KEY = re.compile(r"^[A-Za-z_][\w/.]*$")
#: Spellings written under the canonical key of the line.
_RENAME = {"seqs": "n_seq", "tok_s": "tok/s", "throughput": "tok/s"}


def format_value(value: Any) -> str:
    """A number as text that reads back to the same value (``repr`` of floats), ``nan``/``inf``
    for non-finite ones; strings (the fingerprint) unchanged."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, str):
        if not value or any(c.isspace() or c == "|" for c in value):
            raise ValueError(f"format_line: value {value!r} has blanks or '|'")
        return value
    if hasattr(value, "item"):  # numpy / torch scalars
        value = value.item()
    if isinstance(value, int):
        return str(value)
    x = float(value)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def step_fields(
    loss: float, batch: dict[str, Any] | None, metrics: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a step into (metrics incl. loss, batch group), with canonical key spellings."""
    head: dict[str, Any] = {"loss": loss}
    group: dict[str, Any] = {}
    for key, value in {**(batch or {}), **metrics}.items():
        if value is None:
            continue
        key = _RENAME.get(key, key)
        if not _KEY.match(key) or key in ("step", "total"):
            raise ValueError(f"format_line: bad metric name {key!r}")
        (group if key in BATCH_KEYS else head)[key] = value
    ordered = {k: group[k] for k in BATCH_KEYS if k in group}
    return head, ordered


def format_line(
    step: int, loss: float, *, total: int | None = None, batch: dict[str, Any] | None = None, **metrics: Any
) -> str:
    """One training step as logdoctor's canonical text line (no newline).

    ``step 254/52000 | loss=4.6012 lr=0.0003 tok/s=25100 epoch=0 | batch: n_seq=12 tokens=7904
    len_mean=658.7 len_min=610 len_max=700 pad_frac=0.035 batch_fp=3f2a9c1d0b5e7a42``

    Args:
        step: the optimizer step.
        loss: the training loss of the step.
        total: the planned number of steps, written as ``step N/TOTAL`` when given.
        batch: a ``batch_stats`` / recorder record (its keys go to the ``batch:`` group).
        **metrics: any other numbers (``acc``, ``lr``, ``grad_norm``, ``tok_s``, ``epoch``...);
            batch keys given here go to the batch group too. None values are left out.
    """
    head, group = step_fields(loss, batch, metrics)
    text = f"step {int(step)}" + (f"/{int(total)}" if total else "")
    text += " | " + " ".join(f"{k}={format_value(v)}" for k, v in head.items())
    if group:
        text += " | batch: " + " ".join(f"{k}={format_value(v)}" for k, v in group.items())
    return text


def _json_value(value: Any) -> Any:
    if hasattr(value, "item"):
        value = value.item()
    return value


class JsonlWriter:
    """Writes one JSON object per step, with the same keys as ``format_line``.

    Non-finite numbers are written as ``NaN`` / ``Infinity`` / ``-Infinity``, as Python's json
    module writes and reads them. Each line is flushed, so ``logdoctor tail`` sees it at once.

    Use as ``with JsonlWriter("train.jsonl") as log: log.write(step, loss, lr=lr, batch=rec)``.
    """

    def __init__(self, path_or_file: str | Path | IO[str]) -> None:
        self._own = isinstance(path_or_file, str | Path)
        self._fh: IO[str] = (
            open(path_or_file, "a", encoding="utf-8")  # noqa: SIM115
            if isinstance(path_or_file, str | Path)
            else path_or_file
        )

    def write(
        self, step: int, loss: float, *, total: int | None = None, batch: dict[str, Any] | None = None, **metrics: Any
    ) -> None:
        """Append one step (arguments as in ``format_line``)."""
        head, group = step_fields(loss, batch, metrics)
        obj: dict[str, Any] = {"step": int(step)}
        if total:
            obj["total"] = int(total)
        obj.update({k: _json_value(v) for k, v in {**head, **group}.items()})
        self._fh.write(json.dumps(obj) + "\n")
        self._fh.flush()

    def close(self) -> None:
        """Close the file when this writer opened it."""
        if self._own:
            self._fh.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
