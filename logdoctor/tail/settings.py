"""Tail session settings (the heavy schedule, thresholds) and the small facts a pass needs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from logdoctor.ingest.aliases import FieldMap
from logdoctor.model import EPOCH, STEP, Run


@dataclass(frozen=True, slots=True)
class Latest:
    """The newest step row's values."""

    step: int | None = None
    loss: float | None = None
    acc: float | None = None


@dataclass(frozen=True, slots=True)
class Schedule:
    """When the heavy analyses rerun: after the run grew by ``growth`` (a fraction) or every
    ``interval`` seconds with new rows, but never closer than ``min_gap`` seconds nor more
    often than keeps their share of one core under ``duty``.
    """

    growth: float = 0.10
    interval: float = 30.0
    min_gap: float = 1.0
    #: 1% of a core for the heavy pass: the cheap per-update path takes ~3% at 100 steps/s, and the
    #: follower stays under 5% in all (bench/bench_tail.py cpu: 4.4% vs 5.4-6.3% at 2%)
    duty: float = 0.01
    #: least seconds between heavy passes that a cheap detector asked for (a new spike or rise)
    urgent_gap: float = 0.25
    #: least seconds between cheap passes, unless new rows hold a non-finite loss (raised at once):
    #: the cheap detectors only ask for an early heavy pass otherwise, which 1 s more delays little
    cheap_gap: float = 1.0


@dataclass(slots=True)
class SessionOptions:
    """Tuning of one session; defaults suit the CLI."""

    fields: FieldMap = field(default_factory=FieldMap)
    steps_per_epoch: int | None = None
    #: optimizer steps per row of a log whose rows carry no step (``--stride``)
    stride: int | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    #: detector name -> keyword thresholds (the configuration's ``[spikes]`` and such tables)
    options: Mapping[str, Mapping[str, float | int | str | bool]] = field(default_factory=dict)
    context: int = 512
    full_rows: int = 200_000
    schedule: Schedule = field(default_factory=Schedule)
    sparkline: int = 48


def epochs_covered(run: Run) -> float | None:
    """Epochs the rows cover, where the run tells: rows over its steps per epoch, else from an
    epoch column: an integer counter's completed epochs plus the running one's share of the first
    complete one's rows (its distinct values would call the first step of a second epoch two
    epochs), a fractional one's progress."""
    t = run.table
    spe = run.meta.steps_per_epoch
    if not t.height:
        return None
    if spe:
        return (int(t[STEP][-1]) - int(t[STEP][0]) + 1) / spe
    if not run.has(EPOCH):
        return None
    epoch = t[EPOCH].drop_nulls().drop_nans().to_numpy()
    if epoch.size == 0:
        return None
    if not np.all(epoch == np.floor(epoch)):
        return float(epoch.max())
    values, counts = np.unique(epoch, return_counts=True)
    if values.size < 2:
        return 1.0  # inside the first epoch: at most one
    return values.size - 1 + float(counts[-1]) / float(counts[0])
