"""Follow runs that live in tracking tools: a W&B run's growing ``.wandb`` file, an MLflow run by polling."""

# Both hand the session JSON lines of canonical records, so a followed run
# raises the same events as a text log.

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from logdoctor import sanitize
from logdoctor.errors import InputError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.mlflow_server import (
    RunRef,
    TransientServerError,
    get_json,
    metric_history,
    run_ref,
)
from logdoctor.ingest.namespaced import canonical_renames, dropped
from logdoctor.ingest.parsers.wandb import is_wandb_run
from logdoctor.ingest.wandb_records import RecordReader, decode, is_wandb_log
from logdoctor.tail.documents import DocumentFollower, document_format
from logdoctor.tail.follower import MAX_READ, Chunk


def _line(row: dict[str, Any]) -> bytes:
    clean = {k: (v if not isinstance(v, float) or math.isfinite(v) else str(v)) for k, v in row.items()}
    return (json.dumps(clean) + "\n").encode()


def _renamed(row: dict[str, Any], fields: FieldMap) -> dict[str, Any]:
    renames = canonical_renames(list(row), fields)
    drop = set(dropped(list(row), renames))
    return {renames.get(k, k): v for k, v in row.items() if k not in drop}


class WandbFollower:
    """Reads the records appended to a W&B run's ``.wandb`` file; each history record becomes one
    JSON line (``train/epoch`` as ``epoch``, ``train/global_step`` as ``step``)."""

    def __init__(self, path: str, fields: FieldMap | None = None) -> None:
        self.path = path
        self.fields = fields or FieldMap()
        self._file: Path | None = None
        self._reader: RecordReader | None = None

    @property
    def is_open(self) -> bool:
        return self._file is not None

    @property
    def describe(self) -> str:
        """What is followed, for the first notice."""
        return "W&B run: following its .wandb file as wandb appends to it"

    def head(self, n: int = 0) -> bytes:
        return b""

    def _find(self) -> Path | None:
        p = Path(self.path)
        if p.is_dir():
            logs = sorted(p.glob("*.wandb"), key=lambda f: f.stat().st_mtime)
            return logs[-1] if logs else None
        return p if p.is_file() else None

    def read(self) -> Chunk:
        if self._file is None:
            self._file = self._find()
            if self._file is None:
                return Chunk(b"")
            self._reader = RecordReader(self.path)
        reader = self._reader
        if reader is None:
            return Chunk(b"")
        try:
            with self._file.open("rb") as fh:
                data = os.pread(fh.fileno(), MAX_READ, reader.offset)
        except OSError:
            return Chunk(b"")
        out = bytearray()
        for raw in reader.feed(data):
            rec = decode(raw)
            if rec is None or rec.kind != "history":
                continue
            row = {k: v for k, v in rec.items.items() if isinstance(v, int | float) and not isinstance(v, bool)}
            if "_step" not in row and rec.step is not None:
                row["_step"] = rec.step
            out += _line(_renamed(row, self.fields))
        return Chunk(bytes(out))

    def close(self) -> None:
        self._file = None


#: Longest wait between retries of a failing tracking server (seconds).
MAX_BACKOFF = 60.0
#: How long a tracking server may keep failing (refused, reset, timed out, HTTP 429/502/503/504)
#: before tail gives up on it with an error (seconds): a server restart or upgrade takes minutes.
GIVE_UP_AFTER = 900.0


class MlflowPoller:
    """Polls an MLflow run every ``interval`` seconds; steps complete once a later step appears
    (or the run ends) become JSON lines, each step once."""

    def __init__(self, ref: RunRef, interval: float = 10.0, fields: FieldMap | None = None) -> None:
        self.ref, self.interval, self.fields = ref, interval, fields or FieldMap()
        self._next = 0.0
        self._done = -math.inf
        self._opened = False
        self._failures = 0
        self._failing_since = 0.0

    @property
    def is_open(self) -> bool:
        return self._opened

    @property
    def describe(self) -> str:
        """What is followed, for the first notice."""
        return f"MLflow run on {self.ref.base}: polling every {self.interval:g} s"

    def head(self, n: int = 0) -> bytes:
        return b""

    def read(self) -> Chunk:
        now = time.monotonic()
        if now < self._next:
            return Chunk(b"")
        self._next = now + self.interval
        try:
            chunk = self._poll()
        except TransientServerError as err:  # retried with backoff; said at the first failure
            self._failures += 1
            self._failing_since = self._failing_since if self._failures > 1 else now
            if now - self._failing_since >= GIVE_UP_AFTER:
                raise InputError(f"{err}; gave up after retrying for {GIVE_UP_AFTER:g} s") from None
            self._next = now + min(MAX_BACKOFF, self.interval * 2 ** (self._failures - 1))
            if self._failures == 1:
                note = f"{err}; retrying with backoff (up to {MAX_BACKOFF:g} s apart) for up to {GIVE_UP_AFTER:g} s"
                _say(f"logdoctor: warning: {note}")
                return Chunk(b"", notice=note)
            return Chunk(b"")
        if self._failures:
            self._failures = 0
            return Chunk(chunk.data, notice="the MLflow server answers again")
        return chunk

    def _poll(self) -> Chunk:
        run = get_json(self.ref, "runs/get", {"run_id": self.ref.run_id}).get("run", {})
        keys = sorted({m["key"] for m in run.get("data", {}).get("metrics", []) if "key" in m})
        ended = run.get("info", {}).get("status") in ("FINISHED", "FAILED", "KILLED")
        self._opened = True
        steps: dict[int, dict[str, Any]] = {}
        for key in keys:
            for m in metric_history(self.ref, key):
                steps.setdefault(int(m.get("step", 0)), {})[key] = m.get("value")
        if not steps:
            return Chunk(b"")
        last = max(steps) + (1 if ended else 0)
        out = bytearray()
        for step in sorted(s for s in steps if self._done < s < last):
            row = _renamed({"_step": step, **steps[step]}, self.fields)
            out += _line(row)
        self._done = max(self._done, last - 1)
        return Chunk(bytes(out))

    def close(self) -> None:
        self._opened = False


def _say(line: str) -> None:
    """One line on stderr, beside the view (which may be a file or a pipe a supervisor reads)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(sanitize.terminal(line) + "\n")
        sys.stderr.flush()


def run_follower(
    path: str, interval: float, fields: FieldMap | None = None
) -> WandbFollower | MlflowPoller | DocumentFollower | None:
    """The follower for a run that lives in a tracking tool or a rewritten document (a
    trainer_state.json, a TensorBoard or MLflow run folder), or None for a plain log file."""
    ref = run_ref(path)
    if ref is not None:
        return MlflowPoller(ref, interval, fields)
    p = Path(path)
    if is_wandb_run(p):
        return WandbFollower(path, fields)
    if p.is_file() and p.suffix == ".wandb":
        with p.open("rb") as fh:
            if not is_wandb_log(fh.read(8)):
                raise InputError(f"{path}: not a W&B transaction log")
        return WandbFollower(path, fields)
    if document_format(path) is not None:
        return DocumentFollower(path, fields)
    return None
