"""Walk the sampler for a few epochs, batch indices only, into the per-step records ``logdoctor.emit`` writes."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from logdoctor.probing.batches import StreamIds, index_batches, stream_batches
from logdoctor.probing.lengths import LengthTable
from logdoctor.probing.ranks import Lanes
from logdoctor.probing.records import STEP_KEYS, Batches, batches, step_record
from logdoctor.probing.usercode import call, guarded

#: The walk's default bound, in batches read (every rank's counted).
MAX_BATCHES = 1_000_000


@dataclass(frozen=True, slots=True)
class Settings:
    """How to walk.

    Attributes:
        epochs: epochs to walk.
        max_batches: stop after this many batches (every rank's counted): an endless sampler ends.
        grad_accum: micro-batches (per rank) merged into one optimizer step, as ``emit`` merges them.
        set_epoch: call ``set_epoch(epoch)`` before each epoch, as the HF Trainer, Lightning and
            DDP training loops do (off: a loop that never calls it).
        batch_size: cuts a sampler of single indices (or a stream) into batches when nothing states it.
        drop_last: a short last batch of such a sampler is dropped.
    """

    epochs: int = 3
    max_batches: int = MAX_BATCHES
    grad_accum: int = 1
    set_epoch: bool = True
    batch_size: int | None = None
    drop_last: bool = False


@dataclass(slots=True)
class Walked:
    """What the walk saw. Per batch (each rank's and micro-batch): ``n``, its epoch and optimizer
    step, and its record (``batches``); its indices (and lengths) are ``idx[starts[b]:][:n[b]]``.
    Per optimizer step: ``epoch``, the record's numbers (``cols``), ``batch_fp`` and ``micro_fp``."""

    idx: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    lengths: np.ndarray | None = None
    n: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    b_epoch: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    batches: Batches | None = None
    epoch: list[int] = field(default_factory=list)
    cols: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in STEP_KEYS})
    batch_fp: list[str] = field(default_factory=list)
    micro_fp: list[str | None] = field(default_factory=list)
    epochs: int = 0
    bounded: bool = False
    one_shot: bool = False
    hooked: tuple[str, ...] = ()

    @property
    def steps(self) -> int:
        """Optimizer steps recorded."""
        return len(self.batch_fp)

    @property
    def count(self) -> int:
        """Batches read, every rank's and micro-batch counted."""
        return int(self.n.size)


class Walker:
    """One walk over ``lanes``: ``run`` reads the batches, then computes their records at once."""

    def __init__(
        self,
        lanes: Lanes,
        table: LengthTable | None,
        stream: StreamIds | None,
        settings: Settings,
        batch_size: int | None,
        drop_last: bool,
    ) -> None:
        self.lanes, self.table, self.stream, self.s = lanes, table, stream, settings
        self.batch_size, self.drop_last = settings.batch_size or batch_size, drop_last or settings.drop_last
        self.parts: list[np.ndarray] = []
        self.part_lengths: list[np.ndarray] = []
        self.part_epoch: list[int] = []
        self.step_of: list[int] = []
        self.steps = 0
        self.out = Walked()

    def _read(self, source: Any) -> Iterator[Any]:
        if self.stream is not None:
            return stream_batches(source, self.batch_size, self.drop_last)
        return index_batches(source, self.batch_size, self.drop_last)

    def _add(self, raw: Any, epoch: int) -> None:
        if self.stream is not None:
            idx, lengths = self.stream.batch(raw)
            self.part_lengths.append(lengths)
        else:
            idx = raw
        self.parts.append(idx)
        self.part_epoch.append(epoch)
        self.step_of.append(self.steps)

    def _hooks(self, epoch: int) -> None:
        if not self.s.set_epoch:
            return
        for h in self.lanes.hooks:
            call(f"{type(h).__name__}.set_epoch({epoch})", functools.partial(h.set_epoch, epoch))
        self.out.hooked = tuple(dict.fromkeys(type(h).__name__ for h in self.lanes.hooks))

    def _epoch(self, epoch: int) -> int:
        """Read one epoch's batches; returns how many."""
        read = pending = 0
        with guarded(f"iterating the sampler (epoch {epoch + 1})"):
            for ranks in self.lanes.steps(self._read):
                for b in ranks:
                    self._add(b, epoch)
                read += len(ranks)
                pending += 1
                if pending == self.s.grad_accum:
                    self.steps, pending = self.steps + 1, 0
                if len(self.parts) >= self.s.max_batches:
                    self.out.bounded = True
                    break
        if pending:
            self.steps += 1
        return read

    def run(self) -> Walked:
        """Walk ``settings.epochs`` epochs (fewer when the bound or a one-pass iterator ends it)."""
        self.out.one_shot = any(hasattr(s, "__next__") for s in self.lanes.sources)  # an iterator: one pass
        for epoch in range(self.s.epochs):
            self._hooks(epoch)
            if self._epoch(epoch) == 0:
                break
            self.out.epochs = epoch + 1
            if self.out.bounded or self.out.one_shot:
                break
        return self._finish()

    def _lengths(self, idx: np.ndarray) -> np.ndarray | None:
        if self.stream is not None:
            return np.concatenate(self.part_lengths) if self.part_lengths else np.empty(0, np.int64)
        return self.table.of(idx) if self.table is not None else None

    def _finish(self) -> Walked:
        o = self.out
        if not self.parts:
            return o
        o.idx = np.concatenate(self.parts)
        o.n = np.fromiter((p.size for p in self.parts), np.int64, count=len(self.parts))
        o.b_epoch = np.asarray(self.part_epoch, dtype=np.int64)
        o.lengths = self._lengths(o.idx)
        o.batches = batches(o.idx, o.n, o.lengths)
        starts = np.concatenate(([0], np.cumsum(o.n)[:-1]))
        step_of = np.asarray(self.step_of, dtype=np.int64)
        bounds = np.flatnonzero(np.diff(step_of)) + 1
        for a, z in zip([0, *bounds.tolist()], [*bounds.tolist(), step_of.size], strict=True):
            rec = step_record(o.batches, range(a, z), o.idx, starts)
            o.epoch.append(int(o.b_epoch[a]))
            for k in STEP_KEYS:
                o.cols[k].append(float(rec[k]) if k in rec else float("nan"))
            o.batch_fp.append(str(rec["batch_fp"]))
            o.micro_fp.append(rec.get("micro_fp"))
        return o
