"""Streaming renderers for tail mode: ``start()`` -> ``handle(event)`` ... -> ``stop()``."""

from __future__ import annotations

import json
import math
import sys
from abc import ABC, abstractmethod
from datetime import UTC, datetime
from typing import Any, ClassVar, TextIO

from logdoctor import sanitize
from logdoctor.model import Finding
from logdoctor.renderers.jsonreport import finding_dict, verdict_dict
from logdoctor.tail.events import (
    FindingRaised,
    FindingRevised,
    FindingWithdrawn,
    Heartbeat,
    Notice,
    Progress,
    SourceSummary,
    Started,
    Stopped,
    TailEvent,
    VerdictChanged,
)


class StreamRenderer(ABC):
    """Receives tail events as they happen. Subclasses declare ``name`` and implement ``handle``."""

    name: ClassVar[str]

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out if out is not None else sys.stdout

    def start(self, event: Started) -> None:
        """Following begins."""
        self.handle(event)

    @abstractmethod
    def handle(self, event: TailEvent) -> None:
        """One event."""

    def stop(self, event: Stopped) -> None:
        """Following ended; write the final summary."""
        self.handle(event)

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()


def _num(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def summary_dict(s: SourceSummary) -> dict[str, Any]:
    """One source's final state as JSON."""
    return {
        "source": s.source,
        "format": s.format,
        "rows": s.rows,
        "last_step": s.last_step,
        "last_loss": _num(s.last_loss),
        "first_loss": _num(s.first_loss),
        "min_loss": _num(s.min_loss),
        "findings": s.findings,
        "withdrawn": s.withdrawn,
        "worst": s.worst.label if s.worst is not None else None,
        "verdict": verdict_dict(s.verdict) if s.verdict is not None else None,
    }


def event_dict(event: TailEvent) -> dict[str, Any]:
    """One event as the ``--format jsonl`` contract spells it (``event`` names the kind)."""
    head: dict[str, Any] = {"time": _iso(event.time)}
    if isinstance(event, Started):
        return {
            "event": "start",
            **head,
            "sources": list(event.sources),
            "from_end": event.from_end,
            "watcher": event.watcher,
        }
    if isinstance(event, Stopped):
        return {
            "event": "stop",
            **head,
            "reason": event.reason,
            "exit_code": event.exit_code,
            "sources": [summary_dict(s) for s in event.summaries],
        }
    head["source"] = event.source
    if isinstance(event, FindingRaised):
        return {
            "event": "finding",
            **head,
            "step": event.step,
            "finding": finding_dict(event.finding),
        }
    if isinstance(event, FindingWithdrawn):
        return {
            "event": "withdrawn",
            **head,
            "step": event.step,
            "finding": finding_dict(event.finding),
        }
    if isinstance(event, FindingRevised):
        return {
            "event": "revised",
            **head,
            "step": event.step,
            "previous_severity": event.previous.label,
            "finding": finding_dict(event.finding),
        }
    if isinstance(event, VerdictChanged):
        return {
            "event": "verdict",
            **head,
            "step": event.step,
            "previous": event.previous,
            "verdict": verdict_dict(event.verdict),
        }
    if isinstance(event, Heartbeat):
        return {
            "event": "heartbeat",
            **head,
            "step": event.step,
            "loss": _num(event.loss),
            "rows": event.rows,
        }
    if isinstance(event, Progress):
        return {
            "event": "progress",
            **head,
            "step": event.step,
            "loss": _num(event.loss),
            "rows": event.rows,
        }
    return {"event": "notice", **head, "message": event.message}


def event_json(event: TailEvent) -> str:
    """One event as a JSON document: strings raw (it is data), credentials redacted."""
    return json.dumps(sanitize.clean(event_dict(event), sanitize.redact), allow_nan=False)


class JsonlStream(StreamRenderer):
    """``--format jsonl``: one JSON object per line for supervisors and scripts (no progress)."""

    name = "jsonl"

    def handle(self, event: TailEvent) -> None:
        if not isinstance(event, Progress):
            self._write(event_json(event) + "\n")


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _where(f: Finding) -> str:
    if f.first_step is None:
        return "run"
    if f.last_step in (None, f.first_step):
        return f"step {f.first_step}"
    return f"steps {f.first_step}-{f.last_step}"


def event_line(event: TailEvent) -> str | None:
    """One event as a plain line without the time stamp (None for events not shown), with what
    the followed files and their names wrote shown, not obeyed (``sanitize.terminal``)."""
    line = _event_text(event)
    return None if line is None else sanitize.terminal(line)


def _event_text(event: TailEvent) -> str | None:
    if isinstance(event, Started):
        where = ", from the end" if event.from_end else ""
        return f"following {', '.join(event.sources)} ({event.watcher}{where})"
    if isinstance(event, FindingRaised):
        f = event.finding
        return f"{event.source}: {f.severity.label.upper()} {f.code} {f.rule} ({_where(f)}): {f.message}"
    if isinstance(event, FindingWithdrawn):
        f = event.finding
        return (
            f"{event.source}: WITHDRAWN {f.severity.label} {f.code} {f.rule} ({_where(f)}): "
            f"no longer supported by the analysis at step {event.step}"
        )
    if isinstance(event, FindingRevised):
        f = event.finding
        return (
            f"{event.source}: REVISED {f.code} {f.rule} ({_where(f)}) "
            f"{event.previous.label} -> {f.severity.label.upper()}: {f.message}"
        )
    if isinstance(event, VerdictChanged):
        v = event.verdict
        what = "verdict" if event.previous is None else f"verdict revised ({event.previous} ->)"
        return (
            f"{event.source}: {what} {v.batching} ({_conf(v.confidence)}, {v.cause}) at step {event.step}: {v.summary}"
        )
    if isinstance(event, Heartbeat):
        step = event.step if event.step is not None else "-"
        return f"{event.source}: step {step} loss {_fmt(event.loss)} ({event.rows} rows)"
    if isinstance(event, Notice):
        return f"{event.source}: {event.message}"
    if isinstance(event, Stopped):
        return f"stopped ({event.reason}), exit code {event.exit_code}"
    return None


def summary_line(s: SourceSummary) -> str:
    """The final one-line state of one source (``sanitize.terminal``)."""
    return sanitize.terminal(_summary_text(s))


def _summary_text(s: SourceSummary) -> str:
    v = s.verdict
    verdict = f"verdict {v.batching} ({_conf(v.confidence)})" if v else "no verdict yet"
    worst = f", worst {s.worst.label}" if s.worst is not None else ""
    worst += f", {s.withdrawn} withdrawn" if s.withdrawn else ""
    span = f" (first {_fmt(s.first_loss)}, min {_fmt(s.min_loss)})" if s.first_loss is not None else ""
    step = s.last_step if s.last_step is not None else "-"
    return (
        f"{s.source}: {s.rows} rows, last step {step}, loss {_fmt(s.last_loss)}{span}, "
        f"{s.findings} finding(s){worst}, {verdict}"
    )


class PlainStream(StreamRenderer):
    """Plain time-stamped lines, for logs and pipes (not a terminal)."""

    name = "plain"

    def handle(self, event: TailEvent) -> None:
        line = event_line(event)
        if line is None:
            return
        stamp = datetime.fromtimestamp(event.time).strftime("%H:%M:%S")
        self._write(f"{stamp} {line}\n")
        if isinstance(event, Stopped):
            self._write("".join(f"  {summary_line(s)}\n" for s in event.summaries))


def _conf(confidence: float | None) -> str:
    """A verdict's confidence as two decimals; ``undecided`` for an inconclusive verdict (none)."""
    return "undecided" if confidence is None else f"{confidence:.2f}"
