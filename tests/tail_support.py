"""Test-only detectors, a collecting renderer and a log writer for the tail-mode tests."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from logdoctor import codes
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.model import LINE_NO, LOSS, STEP, Finding, Run, Verdict
from logdoctor.tail.events import FindingRaised, Started, Stopped, TailEvent
from logdoctor.tail.session import HeavyResult
from logdoctor.tail.stream import StreamRenderer


class NanDetector(Analyzer):
    """LD001 for every maximal streak of non-finite losses."""

    name = "test-nan"

    def analyze(self, run: Run) -> Detection:
        loss = run.table[LOSS].to_numpy()
        steps = run.table[STEP].to_numpy()
        lines = run.table[LINE_NO].to_numpy()
        bad = ~np.isfinite(loss)
        out: list[Finding] = []
        i = 0
        while i < len(bad):
            if bad[i]:
                j = i
                while j + 1 < len(bad) and bad[j + 1]:
                    j += 1
                out.append(
                    codes.finding(
                        "LD001",
                        f"loss is NaN at step {steps[i]}",
                        first_step=int(steps[i]),
                        last_step=int(steps[j]),
                        line=int(lines[i]),
                    )
                )
                i = j + 1
            else:
                i += 1
        return Detection(tuple(out))


class SpikeDetector(Analyzer):
    """LD101 for each step whose loss is far above the window median (robust z > ``z``)."""

    name = "test-spikes"

    def __init__(self, z: float = 8.0) -> None:
        self.z = z

    def analyze(self, run: Run) -> Detection:
        loss = run.table[LOSS].to_numpy()
        steps = run.table[STEP].to_numpy()
        fin = np.isfinite(loss)
        if fin.sum() < 20:
            return Detection()
        med = float(np.median(loss[fin]))
        mad = float(np.median(np.abs(loss[fin] - med))) or 1e-9
        z = np.where(fin, (loss - med) / (1.4826 * mad), 0.0)
        hits = np.flatnonzero(z > self.z)
        return Detection(
            tuple(
                codes.finding(
                    "LD101",
                    f"loss spike at step {steps[k]} (z={z[k]:.1f})",
                    first_step=int(steps[k]),
                    last_step=int(steps[k]),
                    evidence={"z": float(z[k])},
                )
                for k in hits
            )
        )


def regular_spikes_heavy(min_spikes: int = 3) -> Callable[[Run], HeavyResult]:
    """A heavy pass: LD103 once spikes recur at a regular interval, and a verdict that says so."""
    spikes = SpikeDetector()

    def heavy(run: Run) -> HeavyResult:
        found = spikes.analyze(run).findings
        at = np.array([f.first_step for f in found], dtype=float)
        gaps = np.diff(at)
        if len(at) >= min_spikes and gaps.std() <= 0.1 * gaps.mean():
            f = codes.finding(
                "LD103",
                f"{len(at)} spikes every {gaps.mean():.0f} steps",
                evidence={"period": float(gaps.mean()), "spikes": len(at)},
            )
            return [*found, f], Verdict("sorted", 0.8, "periodic spikes", "Spikes recur every epoch.")
        return list(found), Verdict("inconclusive", 0.2, "undetermined", "Not enough evidence yet.")

    return heavy


class Collect(StreamRenderer):
    """Keeps every event it receives, in order."""

    name = "collect"

    def __init__(self) -> None:
        super().__init__(out=None)
        self.events: list[TailEvent] = []
        self.started = self.stopped = False

    def start(self, event: Started) -> None:
        self.started = True
        self.handle(event)

    def handle(self, event: TailEvent) -> None:
        self.events.append(event)

    def stop(self, event: Stopped) -> None:
        self.stopped = True
        self.handle(event)

    def findings(self) -> list[tuple[str, int | None]]:
        """(code, first_step) of every raised finding, in order."""
        return [(e.finding.code, e.finding.first_step) for e in self.events if isinstance(e, FindingRaised)]

    def kinds(self) -> list[str]:
        """The class name of every event, in order."""
        return [type(e).__name__ for e in self.events]


def step_line(step: int, loss: float) -> str:
    """One text-log line."""
    value = "nan" if math.isnan(loss) else f"{loss:.4f}"
    return f"step {step}/1000: loss={value} acc={0.1 + step * 0.0005:.4f}\n"


def losses(n: int, *, nan_at: Sequence[int] = (), spike_every: int = 0, seed: int = 0) -> list[float]:
    """A decreasing noisy loss for steps 1..n, NaN at ``nan_at``, spikes every ``spike_every``."""
    rng = np.random.default_rng(seed)
    out = []
    for s in range(1, n + 1):
        v = 3.0 - 0.002 * s + rng.normal(0, 0.01)
        if s in nan_at:
            v = math.nan
        elif spike_every and s % spike_every == 0:
            v += 2.0
        out.append(v)
    return out


class Writer(threading.Thread):
    """Appends lines to a file from a thread; every line is split across two writes."""

    def __init__(
        self,
        path: Path,
        lines: Sequence[str],
        *,
        delay: float = 0.002,
        start_delay: float = 0.0,
        actions: dict[int, Callable[[], None]] | None = None,
    ) -> None:
        super().__init__(daemon=True)
        self.path, self.lines, self.delay, self.start_delay = path, list(lines), delay, start_delay
        self.actions = actions or {}

    def run(self) -> None:
        time.sleep(self.start_delay)
        for i, line in enumerate(self.lines):
            if i in self.actions:
                self.actions[i]()
            half = len(line) // 2
            with self.path.open("a") as fh:
                fh.write(line[:half])
                fh.flush()
                time.sleep(self.delay / 2)
                fh.write(line[half:])
            time.sleep(self.delay / 2)
