"""The human report in the terminal, drawn from the shared rows: with rich, or without it when no
colour is drawn and the text allows (renderers/plainlayout.py, the same characters)."""

from __future__ import annotations

import io
import os
import shutil
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from logdoctor import sanitize
from logdoctor.model import Outcome, Report
from logdoctor.renderers.base import Renderer
from logdoctor.renderers.findinglist import finding_entries, header
from logdoctor.renderers.labels import severity_style, status_style
from logdoctor.renderers.plainlayout import Bullet, Facts, Indented, Line, Panel, Piece, layout, plain_ok
from logdoctor.renderers.rows import (
    SUMMARY_HEADER,
    Rows,
    build_rows,
    shorten_middle,
    sparkline,
    summary_rows,
    summary_title,
)

if TYPE_CHECKING:  # rich is imported when a report is drawn with it, so `check --format json` starts fast
    from rich.console import Console, RenderableType

# Named ANSI colours only (renderers/labels.py): the terminal's palette maps them, so they read on
# light and dark themes.


def use_color(stream: object = None) -> bool:
    """Colour only on a terminal and only when ``NO_COLOR`` is unset (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(callable(isatty) and isatty())


class ConsoleRenderer(Renderer):
    """Verdict panel, run at a glance, findings table, evidence in words and a loss sparkline."""

    name = "text"
    extension = ".txt"

    def _console(self, color: bool, width: int) -> tuple[Console, io.StringIO]:
        from rich.console import Console

        buf = io.StringIO()
        console = Console(
            file=buf,
            width=width,
            force_terminal=color,
            no_color=not color,
            color_system="standard" if color else None,
            highlight=False,
            emoji=False,
            markup=False,
            legacy_windows=False,
        )
        return console, buf

    def _print(self, parts: Sequence[Piece | RenderableType]) -> str:
        color = use_color() if self.color is None else self.color
        width = self.width or (min(shutil.get_terminal_size().columns, 120) if color else 80)
        pieces = [p for p in parts if isinstance(p, Line | Indented | Bullet | Facts | Panel)]
        if not color and len(pieces) == len(parts) and plain_ok(pieces, width):
            return layout(pieces, width)
        console, buf = self._console(color, width)
        for part in parts:
            console.print(_rich(part))
        return "\n".join(line.rstrip() for line in buf.getvalue().split("\n"))

    def render(self, report: Report) -> str:
        rows = sanitize.clean(build_rows(report), sanitize.terminal)  # what the log wrote is shown, not obeyed
        if self.verbosity < 0:
            return rows.verdict_line + "\n"
        width = self.width or 80
        parts: list[Piece] = [_verdict_panel(rows, width), Facts(rows.facts)]
        spark = sparkline(report, width=max(10, min(width, 120) - 12))
        if spark:
            parts.append(Line((("loss      ", "bold"), (spark, ""))))
        parts.extend(_findings(rows, self.verbosity))
        parts.extend(_earlier(rows, self.verbosity))
        parts.extend(_verdict_evidence(rows, self.verbosity))
        if rows.stats_hint:
            parts.append(Bullet(rows.stats_hint, "hint: "))
        parts.extend(Bullet(n, "note: ", style="dim") for n in rows.notes)
        return self._print(parts)

    def render_outcomes(self, outcomes: Sequence[Outcome]) -> str:
        body = [self.render(r) for r in self.per_run_reports(outcomes)]
        if len(outcomes) > 1 and self.verbosity >= 0:
            from rich import box
            from rich.table import Table

            title = sanitize.terminal(summary_title(outcomes))
            table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
            for col in SUMMARY_HEADER:
                wrap = col == "worst problem"
                table.add_column(col, justify="right" if col == "steps" else "left", overflow="fold", no_wrap=not wrap)
            for row in sanitize.clean(summary_rows(outcomes), sanitize.terminal):
                table.add_row(*row, style=status_style(row[2]).removeprefix("bold "))
            body.append(self._print([table]))
        return ("" if self.verbosity < 0 else "\n").join(body)


def _rich(part: Piece | RenderableType) -> RenderableType:
    """A piece as the rich renderable it stands for (anything else as it is)."""
    from rich import box
    from rich.console import Group
    from rich.padding import Padding
    from rich.panel import Panel as RichPanel
    from rich.table import Table
    from rich.text import Text

    if isinstance(part, Line):
        if len(part.parts) == 1 and not part.parts[0][1]:
            return Text(part.parts[0][0], style=part.style)
        return Text.assemble(*part.parts)
    if isinstance(part, Indented):
        return Padding(Text(part.text), (0, 0, 0, 2))
    if isinstance(part, Bullet):
        grid = Table.grid()
        grid.add_column(no_wrap=True, style=part.style)
        grid.add_column(overflow="fold", style=part.style)
        grid.add_row(part.lead, part.text)
        return grid
    if isinstance(part, Facts):
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column(overflow="fold")
        for label, value in part.rows:
            table.add_row(label, value)
        return table
    if isinstance(part, Panel):
        title = Text(part.title)  # a str title is markup
        return RichPanel(Group(*(_rich(i) for i in part.items)), title=title, title_align="left", box=box.ROUNDED)
    return part


def _verdict_panel(rows: Rows, width: int = 80) -> Panel:
    """Health first: one line per problem (at most three, then ``+ N more``), the batching line,
    then what to do."""
    lines: list[Line | Bullet] = []
    inner = max(20, width - 4)
    for level, text in rows.headline:
        style = status_style(level) if level else ""
        label = f"{level.upper():<9}" if level else ""
        lines.append(Line(((label, style), (shorten_middle(text, inner - len(label)), ""))))
    lines.append(Line.of(rows.batching))
    if len(rows.todo) == 1:
        lines.append(Line((("What to do: ", "bold"), (rows.todo[0], ""))))
    elif rows.todo:
        lines.append(Line.of("What to do:", style="bold"))
        lines.extend(Bullet(hint, "- ") for hint in rows.todo)
    return Panel(f"logdoctor: {shorten_middle(rows.path, max(20, width - 17))}", lines)


def _findings(rows: Rows, verbosity: int) -> list[Piece]:
    """Each finding as a header line and its message below at full width (``-v``: its evidence,
    what to do, confidence and log line too); what is left out is said."""
    if not rows.findings:
        return [Line.of("No findings.", style="green")]
    entries, footer = finding_entries(rows, verbosity)
    out: list[Piece] = [Line.of("Findings", style="bold")] if entries else []
    for e in entries:
        if isinstance(e, str):
            out.append(Indented(f"({e})"))
            continue
        out.append(Line.of(header(e), style=severity_style(e.severity)))
        out.append(Indented(e.message))
        if verbosity > 0:
            conf = f"confidence {e.confidence}" + (f", log line {e.line}" if e.line else "")
            out.extend(Bullet(x) for x in (*e.evidence, conf))
            if e.hint:
                out.append(Indented(f"What to do: {e.hint}"))
    if footer:
        out.append(Line.of(footer))
    return out


def _verdict_evidence(rows: Rows, verbosity: int) -> list[Piece]:
    """The numbers behind a verdict that blames the batching (every verdict's with ``-v``)."""
    lines = rows.evidence_detail if verbosity > 0 else rows.evidence if rows.fault else ()
    if not lines:
        return []
    return [Line.of("Evidence behind the batching verdict", style="bold"), *(Bullet(s) for s in lines)]


def _earlier(rows: Rows, verbosity: int) -> list[Piece]:
    """The earlier runs appended to the same log: one line per run with problems, then the rest
    summarised (``-v``: every problem of every earlier run)."""
    if not rows.earlier_title:
        return []
    lines = rows.earlier_detail if verbosity > 0 and rows.earlier_detail else ()
    rest = tuple(x for x in rows.earlier if not x.startswith("run ")) if lines else rows.earlier
    return [Line.of(rows.earlier_title, style="bold"), *(Bullet(x) for x in (*lines, *rest))]
