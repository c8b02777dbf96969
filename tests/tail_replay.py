"""Replay a finished log through a tail session as if a trainer wrote it live (test support).

The clock is simulated, so a replay is deterministic and costs only the analyses: the trainer
writes ``rate`` steps a second, the follower wakes every ``update`` seconds (tail's min_update)
and hands the lines read to the session as the follow loop does (tail/runner.py: the first content
at once, then gathered for ``parse_gap`` seconds unless they may hold a non-finite value, and all
of them before a heavy pass); the heavy pass runs whenever the session's schedule says so, its CPU
cost counted as 0 (the most passes, hence the most looks, that the schedule allows: the strictest
replay).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from logdoctor.model import Finding, Report, Severity
from logdoctor.tail.events import FindingRaised, FindingRevised, FindingWithdrawn, TailEvent
from logdoctor.tail.judge import same
from logdoctor.tail.pending import Pending
from logdoctor.tail.registry import default_detectors
from logdoctor.tail.runner import TailOptions
from logdoctor.tail.session import SessionOptions, TailSession
from tests.reports import report_of


@dataclass(slots=True)
class Replay:
    """What a replay raised, and the batch report of the finished log."""

    events: list[TailEvent] = field(default_factory=list)
    #: lines of the log read when each event was raised
    lines_fed: list[int] = field(default_factory=list)
    session: TailSession | None = None
    report: Report | None = None

    def add(self, events: list[TailEvent], lines: int) -> None:
        """Record events raised with ``lines`` lines read."""
        self.events += events
        self.lines_fed += [lines] * len(events)

    def severe(self, kind: type = FindingRaised) -> list[Finding]:
        """Warning/error findings of the events of ``kind`` (raised unless told)."""
        return [
            e.finding
            for e in self.events
            if isinstance(e, kind) and e.finding.severity >= Severity.WARNING  # type: ignore[attr-defined]
        ]

    def unbacked(self) -> list[Finding]:
        """Warnings/errors that stand at the end (raised, not withdrawn nor revised below warning)
        without ``analyze`` of the finished log giving them at warning or above: those that stand
        matched by code, rule and steps; each raised one by a standing one of its code (a
        finding's steps move as the run grows, as a divergence's start does)."""
        assert self.report is not None and self.session is not None
        near = max(1, self.report.series.steps // 20)
        final = [f for f in self.report.findings if f.severity >= Severity.WARNING]
        standing = [f for f in self.session.judge.standing if f.severity >= Severity.WARNING]
        out = [f for f in standing if not any(same(f, g, near) for g in final)]
        for i, e in enumerate(self.events):
            if not isinstance(e, FindingRaised | FindingRevised) or e.finding.severity < Severity.WARNING:
                continue
            f = e.finding
            taken_back = any(
                isinstance(g, FindingWithdrawn | FindingRevised)
                and same(f, g.finding, near)
                and (isinstance(g, FindingWithdrawn) or g.finding.severity < Severity.WARNING)
                for g in self.events[i + 1 :]
            )
            if not taken_back and not any(s.code == f.code and s.rule == f.rule for s in standing):
                out.append(f)
        return out

    def raised_at(self) -> list[tuple[Finding, int]]:
        """Each warning/error raised, with the lines read when it was raised."""
        return [
            (e.finding, n)
            for e, n in zip(self.events, self.lines_fed, strict=True)
            if isinstance(e, FindingRaised) and e.finding.severity >= Severity.WARNING
        ]


def replay(
    path: Path,
    *,
    rate: float = 50.0,
    update: float = 0.5,
    opts: SessionOptions | None = None,
    final: bool = True,
    parse_gap: float | None = None,
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
    fed = [0]
    session.prefix = lambda: b"".join(lines[: fed[0]])
    parse_gap = TailOptions(()).parse_gap if parse_gap is None else parse_gap
    pending = Pending(gap=parse_gap)
    now = 0.0
    for i in range(0, len(lines), per):
        now += update
        fed[0] = min(len(lines), i + per)
        data = b"".join(lines[i : i + per])
        if session.parser is None or parse_gap <= 0:  # the first content: its format
            new = session.feed(data, now)
        else:
            pending.add(data, now)
            new = session.feed(pending.take(), now) if pending.due(now) else []
        if session.heavy_due(now):
            new += session.feed(pending.take(), now)  # the pass reads every line read
            run = session.heavy_input(now)
            new += session.apply_heavy(session.heavy_call(run), 0.0, now)
        out.add(new, fed[0])
    if final:
        out.add(session.feed(pending.take(), now), len(lines))
        out.add(session.run_heavy(now, final=True), len(lines))
    out.report = report_of(str(path))
    return out


def replay_document(path: Path, tmp: Path, *, saves: int = 12, opts: SessionOptions | None = None) -> Replay:
    """Replay a trainer_state.json as HF writes it: the whole file rewritten at each save, with
    ``log_history`` grown by a share of its entries each time."""
    import json

    from logdoctor.tail.documents import DocumentFollower

    opts = opts or SessionOptions()
    cheap, heavy = default_detectors(opts)
    live = tmp / path.name
    session = TailSession(str(live), cheap, heavy, opts)
    follower = DocumentFollower(str(live), opts.fields)
    doc = json.loads(path.read_text())
    history = doc["log_history"]
    out = Replay(session=session)
    now = 0.0
    for k in range(1, saves + 1):
        now += 1.0
        part = {**doc, "log_history": history[: max(1, len(history) * k // saves)]}
        tmp_file = live.with_suffix(".tmp")
        tmp_file.write_text(json.dumps(part))
        tmp_file.replace(live)  # HF saves by writing the whole file
        chunk = follower.read()
        new = session.feed_run(chunk.run, now) if chunk.run is not None else []
        if session.heavy_due(now):
            run = session.heavy_input(now)
            new += session.apply_heavy(session.heavy_call(run), 0.0, now)
        out.add(new, len(part["log_history"]))
    out.add(session.run_heavy(now, final=True), len(history))
    out.report = report_of(str(path))
    return out
