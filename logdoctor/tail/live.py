"""The live terminal view of tail mode (rich.live): latest values, sparkline, verdict, findings."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Iterable
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
    FindingRevised,
    FindingWithdrawn,
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

    def __init__(self, out: TextIO | None = None, *, fps: float = 4.0, width: int | None = None) -> None:
        super().__init__(out)
        self.console = Console(file=self.out, width=width)
        self.fps = fps
        self._rows: dict[str, _Row] = {}
        self._findings: deque[FindingRaised | FindingWithdrawn | FindingRevised] = deque(maxlen=6)
        self._notices: deque[str] = deque(maxlen=2)
        self._title = "logdoctor tail"
        self._live: Live | None = None
        self._drawn = 0.0
        self._state = "Ctrl-C to stop"
        self._counts: dict[Severity, int] = {}
        self._withdrawn = 0

    def start(self, event: Started) -> None:
        self._title = sanitize.terminal(f"logdoctor tail · {', '.join(event.sources)} · {event.watcher}")
        self._live = Live(self._view(), console=self.console, auto_refresh=False, transient=False)
        self._live.start()

    def handle(self, event: TailEvent) -> None:
        row = self._rows.setdefault(getattr(event, "source", ""), _Row()) if _has_source(event) else None
        if isinstance(event, Progress) and row is not None:
            row.step, row.loss, row.acc, row.rows, row.recent = (
                event.step,
                event.loss,
                event.acc,
                event.rows,
                event.recent_loss,
            )
        elif isinstance(event, FindingRaised | FindingWithdrawn | FindingRevised) and row is not None:
            self._count(event, row)
        elif isinstance(event, VerdictChanged) and row is not None:
            row.verdict = event.verdict
        elif isinstance(event, Notice):
            self._notices.append(event_line(event) or "")
        urgent = not isinstance(event, Progress | Started | Stopped)
        self._redraw(force=urgent)

    def _count(self, event: FindingRaised | FindingWithdrawn | FindingRevised, row: _Row) -> None:
        """Counts of what stands, by severity: a withdrawal takes one off, a revision moves it."""
        self._findings.append(event)
        sev = event.finding.severity
        gone = event.previous if isinstance(event, FindingRevised) else sev
        if not isinstance(event, FindingRaised):
            self._counts[gone] = max(0, self._counts.get(gone, 0) - 1)
        if isinstance(event, FindingWithdrawn):
            row.findings = max(0, row.findings - 1)
            self._withdrawn += 1
            return
        row.findings += isinstance(event, FindingRaised)
        self._counts[sev] = self._counts.get(sev, 0) + 1

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
        runs = _runs_table(self._rows)
        found = Table(expand=True, box=None, pad_edge=False, show_header=False)
        found.add_column(no_wrap=True, style="dim")
        found.add_column(no_wrap=True)
        found.add_column(no_wrap=True)
        found.add_column(overflow="fold", ratio=1)  # wrapped, never cut: the message is the finding
        for ev in reversed(self._findings):
            f = ev.finding
            where = f"step {f.first_step}" if f.first_step is not None else "run-wide"
            label = Text(f"{f.severity.label.upper():7}", style=_SEV_STYLE[f.severity])
            message = f.message
            if isinstance(ev, FindingWithdrawn):
                label = Text("withdrawn", style="dim strike")
                message = f"{f.severity.label} no longer supported at step {ev.step}"
            elif isinstance(ev, FindingRevised):
                label = Text(f"revised {ev.previous.label}->{f.severity.label}", style=_SEV_STYLE[f.severity])
            found.add_row(
                datetime.fromtimestamp(ev.time).strftime("%H:%M:%S"),
                label,
                f"{f.code} {where}",
                Text(sanitize.terminal(message)),
            )
        if not self._findings:
            found.add_row("", "", Text("no findings yet", style="dim"), "")
        counts = ", ".join(f"{n} {sev.label}" for sev, n in sorted(self._counts.items(), reverse=True) if n)
        counts += f"{', ' if counts else ''}{self._withdrawn} withdrawn" if self._withdrawn else ""
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


def _runs_table(rows: dict[str, _Row]) -> Table:
    """One line per file. Step, loss and acc never shrink (each at least as wide as its values):
    at 80 columns the file name, sparkline and verdict give way first."""
    cells = [
        (
            Text(sanitize.terminal(_short(name, rows))),
            _val(r.step),
            _num(r.loss),
            _num(r.acc),
            sparkline(r.recent[-32:]),
            _verdict(r.verdict),
        )
        for name, r in rows.items()
    ] or [(Text("waiting for data…"), "", Text(""), Text(""), Text(""), Text(""))]
    runs = Table(expand=True, box=None, pad_edge=False)
    runs.add_column("file", no_wrap=True, overflow="ellipsis", ratio=2, min_width=8)
    for i, col in ((1, "step"), (2, "loss"), (3, "acc")):
        width = max(len(col), *(len(str(c[i]) if isinstance(c[i], str) else c[i].plain) for c in cells))  # type: ignore[union-attr]
        runs.add_column(col, justify="right", no_wrap=True, min_width=width)
    runs.add_column("loss, recent", no_wrap=True, overflow="crop", ratio=2, min_width=6)
    runs.add_column("verdict", no_wrap=True, overflow="ellipsis", ratio=3, min_width=8)
    for c in cells:
        runs.add_row(*c)
    return runs


def _short(name: str, names: Iterable[str]) -> str:
    """A followed path by its file name (the title and notices carry the whole path), with as
    many parent folders as tell it apart from the other files."""
    parts = name.rstrip("/").split("/")
    others = [n.rstrip("/").split("/") for n in names if n != name]
    for k in range(1, len(parts) + 1):
        if all(o[-k:] != parts[-k:] for o in others):
            return "/".join(parts[-k:])
    return name


def _has_source(event: TailEvent) -> bool:
    return isinstance(event, Progress | FindingRaised | FindingWithdrawn | FindingRevised | VerdictChanged)


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
    return Text(f"{v.batching} {_conf(v.confidence)} ({v.cause})", style=_VERDICT_STYLE.get(v.batching, ""))


def _conf(confidence: float | None) -> str:
    """A verdict's confidence as two decimals; ``undecided`` for an inconclusive verdict (none)."""
    return "undecided" if confidence is None else f"{confidence:.2f}"
