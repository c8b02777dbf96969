"""Tail-mode events (what streaming renderers receive) and the rule that raises a finding once."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from logdoctor.model import Finding, Severity, Verdict


@dataclass(frozen=True, slots=True)
class Started:
    """Following began. ``sources`` are the paths and globs as the user gave them."""

    sources: tuple[str, ...]
    time: float
    from_end: bool = False
    watcher: str = "poll"


@dataclass(frozen=True, slots=True)
class FindingRaised:
    """A new finding in ``source``; ``step`` is the latest step logged when it was raised."""

    source: str
    finding: Finding
    step: int | None
    time: float


@dataclass(frozen=True, slots=True)
class FindingWithdrawn:
    """A raised finding that later passes over more of the run no longer give."""

    source: str
    finding: Finding
    step: int | None
    time: float


@dataclass(frozen=True, slots=True)
class FindingRevised:
    """A raised finding whose severity later passes agree has changed (``previous`` was it)."""

    source: str
    finding: Finding
    previous: Severity
    step: int | None
    time: float


@dataclass(frozen=True, slots=True)
class VerdictChanged:
    """The batching verdict of ``source`` changed (``previous`` is None for the first one)."""

    source: str
    verdict: Verdict
    previous: str | None
    step: int | None
    time: float


@dataclass(frozen=True, slots=True)
class Progress:
    """New steps arrived in ``source``: the latest values and the recent loss for a sparkline."""

    source: str
    step: int
    loss: float
    acc: float | None
    rows: int
    recent_loss: tuple[float, ...]
    time: float


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Periodic sign of life with the latest step of ``source`` (None before any step)."""

    source: str
    step: int | None
    loss: float | None
    rows: int
    time: float


@dataclass(frozen=True, slots=True)
class Notice:
    """Something about the input worth saying: waiting, format found, truncated, replaced."""

    source: str
    message: str
    time: float


@dataclass(frozen=True, slots=True)
class SourceSummary:
    """Where one followed file stands when following stops."""

    source: str
    format: str | None
    rows: int
    last_step: int | None
    last_loss: float | None
    findings: int
    worst: Severity | None
    verdict: Verdict | None
    first_loss: float | None = None
    min_loss: float | None = None
    #: findings raised and later withdrawn (``findings`` counts only those that stand)
    withdrawn: int = 0


@dataclass(frozen=True, slots=True)
class Stopped:
    """Following ended: why, with which exit code, and a summary per source."""

    reason: str
    exit_code: int
    summaries: tuple[SourceSummary, ...]
    time: float


TailEvent = (
    Started
    | FindingRaised
    | FindingWithdrawn
    | FindingRevised
    | VerdictChanged
    | Progress
    | Heartbeat
    | Notice
    | Stopped
)
#: Events that change what stands (the ones ``--on-finding`` hooks receive).
FindingEvent = FindingRaised | FindingWithdrawn | FindingRevised


@dataclass(slots=True)
class Deduper:
    """Remembers raised findings so that re-analysis does not raise them again.

    A finding with steps is the same as an earlier one of the same code when it starts at the
    same step, or when its start lies inside (or within ``near`` steps after) an earlier one's
    range: a NaN streak seen through a sliding window, or a changepoint whose estimate moved a
    few steps as data arrived. Run-wide findings (no steps) are the same per code and rule.
    Memory is bounded: the newest ``keep`` ranges per code are remembered.
    """

    keep: int = 512
    _ranges: dict[str, deque[tuple[int, int]]] = field(default_factory=dict)
    _runwide: set[tuple[str, str]] = field(default_factory=set)

    def is_new(self, f: Finding, near: int = 1) -> bool:
        """Record ``f`` and return True when it was not raised before."""
        if f.first_step is None:
            key = (f.code, f.rule)
            if key in self._runwide:
                return False
            self._runwide.add(key)
            return True
        first = f.first_step
        last = f.last_step if f.last_step is not None else first
        ranges = self._ranges.setdefault(f.code, deque(maxlen=self.keep))
        for i, (a, b) in enumerate(ranges):
            if a == first or a - near <= first <= b + near:
                ranges[i] = (min(a, first), max(b, last))
                return False
        ranges.append((first, last))
        return True
