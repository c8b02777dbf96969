"""Replay a finished log through a tail session as if a trainer wrote it live (test support).

The clock is simulated, so a replay is deterministic and costs only the analyses: the trainer
writes ``rate`` steps a second, the follower wakes every ``update`` seconds (tail's min_update)
and the heavy pass runs whenever the session's schedule says so, its CPU cost counted as 0 (the
most passes, hence the most looks, that the schedule allows: the strictest replay).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from logdoctor import pipeline
from logdoctor.model import Finding, Report, Severity
from logdoctor.tail.events import FindingRaised, FindingRevised, FindingWithdrawn, TailEvent
from logdoctor.tail.judge import same
from logdoctor.tail.registry import default_detectors
from logdoctor.tail.session import SessionOptions, TailSession


@dataclass(slots=True)
class Replay:
    """What a replay raised, and the batch report of the finished log."""

    events: list[TailEvent] = field(default_factory=list)
    session: TailSession | None = None
    report: Report | None = None

    def severe(self, kind: type = FindingRaised) -> list[Finding]:
        """Warning/error findings of the events of ``kind`` (raised unless told)."""
        return [
            e.finding
            for e in self.events
            if isinstance(e, kind) and e.finding.severity >= Severity.WARNING  # type: ignore[attr-defined]
        ]

    def unbacked(self) -> list[Finding]:
        """Warnings/errors raised (or revised up) during the run that ``analyze`` of the finished
        log does not give (at warning or above) and that were not withdrawn (or revised below
        warning) later."""
        assert self.report is not None
        rows = self.report.series.steps
        near = max(1, rows // 20)
        final = [f for f in self.report.findings if f.severity >= Severity.WARNING]
        out: list[Finding] = []
        for i, e in enumerate(self.events):
            if not isinstance(e, FindingRaised | FindingRevised):
                continue
            f = e.finding
            if f.severity < Severity.WARNING or any(same(f, g, near) for g in final):
                continue
            later = self.events[i + 1 :]
            gone = any(
                isinstance(g, FindingWithdrawn | FindingRevised)
                and same(f, g.finding, 1)
                and (isinstance(g, FindingWithdrawn) or g.finding.severity < Severity.WARNING)
                for g in later
            )
            if not gone:
                out.append(f)
        return out


def replay(
    path: Path,
    *,
    rate: float = 50.0,
    update: float = 0.5,
    opts: SessionOptions | None = None,
    final: bool = True,
) -> Replay:
    """Feed ``path`` to a session line by line at ``rate`` steps (lines) a second."""
    opts = opts or SessionOptions()
    cheap, heavy = default_detectors(opts)
    session = TailSession(str(path), cheap, heavy, opts)
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    per = max(1, int(rate * update))
    out = Replay(session=session)
    now = 0.0
    for i in range(0, len(lines), per):
        now += update
        out.events += session.feed(b"".join(lines[i : i + per]), now)
        if session.heavy_due(now):
            run = session.heavy_input(now)
            out.events += session.apply_heavy(session.heavy_call(run), 0.0, now)
    if final:
        out.events += session.run_heavy(now, final=True)
    out.report = pipeline.analyze(pipeline.load(str(path)))
    return out
