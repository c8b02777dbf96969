"""What the framework callbacks share: micro-batches -> optimizer step -> logging interval -> line."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from logdoctor.emit import dist
from logdoctor.emit.lines import JsonlWriter
from logdoctor.emit.stats import Pair, combine


def fresh_path(path: Path) -> Path | None:
    """Move an earlier run's non-empty log aside (``name.1.jsonl``, ``name.2.jsonl``...) so a new
    run's file is not read as a resume of it; returns where it went (None: nothing to move)."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    k = 1
    while (aside := path.with_name(f"{path.stem}.{k}{path.suffix}")).exists():
        k += 1
    path.rename(aside)
    return aside


class EmitSession:
    """Records of one training run, grouped the way the loss is logged.

    ``add`` a pair per micro-batch this rank trains on; ``end_step`` at each optimizer step
    combines them with the other ranks' (one ``all_gather_object`` of a few hundred bytes per
    step under torch.distributed); ``interval`` merges the steps since the last log.
    """

    def __init__(self, jsonl: str | Path | None) -> None:
        self.path = Path(jsonl) if jsonl is not None else None
        self.writer: JsonlWriter | None = None
        self.micro: list[Pair] = []
        self.steps: list[list[Pair]] = []
        self._warned: set[str] = set()

    def open(self, resuming: bool) -> None:
        """Open the JSONL on rank 0 at train start: parents created, an earlier run moved aside
        unless this run resumes from a checkpoint (then lines append after the old ones)."""
        if self.path is None or self.writer is not None or not dist.is_rank_zero():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not resuming and (aside := fresh_path(self.path)) is not None:
            self.warn_once("aside", f"logdoctor.emit: an earlier run's {self.path.name} was moved to {aside.name}")
        self.writer = JsonlWriter(self.path)

    def add(self, pair: Pair) -> None:
        """One micro-batch this rank trained on."""
        self.micro.append(pair)

    def end_step(self, loss: float | None = None) -> float | None:
        """Close the optimizer step: keep its pairs from every rank (a collective under
        torch.distributed); returns the ranks' mean of ``loss`` (None when not given)."""
        parts = dist.gather([(self.micro, loss)])
        self.micro = []
        pairs = [pair for part, _ in parts for pair in part]
        if pairs:
            self.steps.append(pairs)
        losses = [x for _, x in parts if x is not None]
        return sum(losses) / len(losses) if losses else None

    def interval(self) -> dict[str, Any]:
        """The record of the steps since the last call, merged: the fingerprint only when the
        interval is one step (a union of several steps recurs only if the interval divides the
        epoch, so it could neither prove nor rule out static composition)."""
        steps, self.steps = self.steps, []
        rec = combine([pair for step in steps for pair in step])
        if len(steps) > 1:
            rec.pop("micro_fp", None)
        if len(steps) > 1 and rec.pop("batch_fp", None) is not None:
            self.warn_once(
                "interval",
                "logdoctor.emit: the loss is logged every "
                f"{len(steps)} steps, so batch statistics are merged over each interval and "
                "batch_fp is left out; log every step for fingerprints",
            )
        return rec

    def write(self, step: int, loss: float, **fields: Any) -> None:
        """A line of the JSONL (rank 0 only)."""
        if self.writer is not None:
            self.writer.write(step, loss, **fields)

    def close(self) -> None:
        """Close the JSONL."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def warn_once(self, key: str, message: str) -> None:
        """A warning, once per run and kind."""
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, RuntimeWarning, stacklevel=3)
