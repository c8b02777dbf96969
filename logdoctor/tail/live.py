"""The live terminal view of tail mode (rich.live): latest values, sparkline, verdict, findings."""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import TextIO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from logdoctor import sanitize
from logdoctor.model import Severity, Verdict
from logdoctor.tail.events import (
    FindingRaised,
    Heartbeat,
    Notice,
    Progress,
    Started,
    Stopped,
    TailEvent,
    VerdictChanged,
)
from logdoctor.tail.stream import StreamRenderer, event_line, summary_line

_BARS = "▁▂▃▄▅▆▇█"
_SEV_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_VERDICT_STYLE = {"sorted": "bold red", "static": "bold red", "healthy": "green"}


def sparkline(values: tuple[float, ...]) -> Text:
    """Bars scaled to the bulk of the finite values, so one spike does not flatten the rest:
    values beyond twice the 10-90% range past either end are drawn as red extremes; a red x
    marks NaN/inf.
    """
    finite = sorted(v for v in values if math.isfinite(v))
    lo = hi = 0.0
    if finite:
        q10, q90 = finite[len(finite) // 10], finite[(len(finite) * 9) // 10 - (len(finite) >= 10)]
        spread = q90 - q10
        lo, hi = max(finite[0], q10 - 2 * spread), min(finite[-1], q90 + 2 * spread)
    out = Text()
    for v in values:
        if not math.isfinite(v):
            out.append("x", style="bold red")
        elif v > hi or v < lo:
            out.append(_BARS[-1] if v > hi else _BARS[0], style="bold red")
        else:
            idx = 0 if hi <= lo else round((v - lo) / (hi - lo) * (len(_BARS) - 1))
            out.append(_BARS[idx], style="blue")
    return out


@dataclass(slots=True)
class _Row:
    step: int | None = None
    loss: float | None = None
    acc: float | None = None
    rows: int = 0
    recent: tuple[float, ...] = ()
    verdict: Verdict | None = None
    findings: int = 0


class LiveStream(StreamRenderer):
    """A panel redrawn in place at most ``fps`` times a second (no background refresh thread)."""

    name = "live"

    def __init__(
        self, out: TextIO | None = None, *, fps: float = 4.0, width: int | None = None
    ) -> None:
        super().__init__(out)
        self.console = Console(file=self.out, width=width)
        self.fps = fps
        self._rows: dict[str, _Row] = {}
        self._findings: deque[FindingRaised] = deque(maxlen=6)
        self._notices: deque[str] = deque(maxlen=2)
        self._title = "logdoctor tail"
        self._live: Live | None = None
        self._drawn = 0.0
        self._state = "Ctrl-C to stop"
        self._counts: dict[Severity, int] = {}

    def start(self, event: Started) -> None:
        self._title = sanitize.terminal(f"logdoctor tail · {', '.join(event.sources)} · {event.watcher}")
        self._live = Live(self._view(), console=self.console, auto_refresh=False, transient=False)
        self._live.start()

    def handle(self, event: TailEvent) -> None:
        row = (
            self._rows.setdefault(getattr(event, "source", ""), _Row())
            if _has_source(event)
            else None
        )
        if isinstance(event, Progress) and row is not None:
            row.step, row.loss, row.acc, row.rows, row.recent = (
                event.step,
                event.loss,
                event.acc,
                event.rows,
                event.recent_loss,
            )
        elif isinstance(event, FindingRaised) and row is not None:
            row.findings += 1
            self._findings.append(event)
            sev = event.finding.severity
            self._counts[sev] = self._counts.get(sev, 0) + 1
        elif isinstance(event, VerdictChanged) and row is not None:
            row.verdict = event.verdict
        elif isinstance(event, Notice):
            self._notices.append(event_line(event) or "")
        urgent = isinstance(event, FindingRaised | VerdictChanged | Notice | Heartbeat)
        self._redraw(force=urgent)

    def stop(self, event: Stopped) -> None:
        self._state = f"stopped ({event.reason})"
        self._redraw(force=True)
        if self._live is not None:
            self._live.stop()
        self.console.print(event_line(event) or "", highlight=False, markup=False)
        for s in event.summaries:
            self.console.print("  " + summary_line(s), highlight=False, markup=False)

    def _redraw(self, *, force: bool) -> None:
        now = time.monotonic()
        if self._live is None or (not force and now - self._drawn < 1.0 / self.fps):
            return
        self._drawn = now
        self._live.update(self._view(), refresh=True)

    def _view(self) -> RenderableType:
        runs = Table(expand=True, box=None, pad_edge=False)
        for col, just in (
            ("file", "left"),
            ("step", "right"),
            ("loss", "right"),
            ("acc", "right"),
            ("loss, recent steps", "left"),
            ("verdict", "left"),
        ):
            runs.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
        if not self._rows:
            runs.add_row("waiting for data…", "", "", "", "", "")
        for name, r in self._rows.items():
            runs.add_row(
                Text(sanitize.terminal(name)),
                _val(r.step),
                _num(r.loss),
                _num(r.acc),
                sparkline(r.recent[-32:]),
                _verdict(r.verdict),
            )
        found = Table(expand=True, box=None, pad_edge=False, show_header=False)
        found.add_column(no_wrap=True, style="dim")
        found.add_column(no_wrap=True)
        found.add_column(no_wrap=True)
        found.add_column(overflow="fold", ratio=1)  # wrapped, never cut: the message is the finding
        for ev in reversed(self._findings):
            f = ev.finding
            where = f"step {f.first_step}" if f.first_step is not None else "run-wide"
            found.add_row(
                datetime.fromtimestamp(ev.time).strftime("%H:%M:%S"),
                Text(f"{f.severity.label.upper():7}", style=_SEV_STYLE[f.severity]),
                f"{f.code} {where}",
                Text(sanitize.terminal(f.message)),
            )
        if not self._findings:
            found.add_row("", "", Text("no findings yet", style="dim"), "")
        counts = ", ".join(
            f"{n} {sev.label}" for sev, n in sorted(self._counts.items(), reverse=True)
        )
        head = Text("\nnewest findings", style="bold")
        head.append(f"  ({counts})" if counts else "", style="")
        parts: list[RenderableType] = [runs, head, found]
        parts += [Text(n, style="dim") for n in self._notices]
        clock = datetime.now().strftime("%H:%M:%S")
        return Panel(
            Group(*parts),
            title=Text(self._title),
            subtitle=f"{clock} · {self._state}",
            title_align="left",
        )


def _has_source(event: TailEvent) -> bool:
    return isinstance(event, Progress | FindingRaised | VerdictChanged)


def _val(v: int | None) -> str:
    return "-" if v is None else str(v)


def _num(v: float | None) -> Text:
    if v is None:
        return Text("-")
    if not math.isfinite(v):
        return Text(str(v), style="bold red")
    return Text(f"{v:.4g}")


def _verdict(v: Verdict | None) -> Text:
    if v is None:
        return Text("pending", style="dim")
    return Text(
        f"{v.batching} {_conf(v.confidence)} ({v.cause})", style=_VERDICT_STYLE.get(v.batching, "")
    )


def _conf(confidence: float | None) -> str:
    """A verdict's confidence as two decimals; ``undecided`` for an inconclusive verdict (none)."""
    return "undecided" if confidence is None else f"{confidence:.2f}"
