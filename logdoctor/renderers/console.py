"""The human report in the terminal, drawn with rich from the shared rows."""

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
from logdoctor.renderers.rows import (
    SUMMARY_HEADER,
    Rows,
    build_rows,
    shorten_middle,
    sparkline,
    summary_rows,
    summary_title,
)

if TYPE_CHECKING:  # rich is imported when a report is drawn, so `check --format json` starts fast
    from rich.console import Console, RenderableType
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.table import Table

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

    def _console(self) -> tuple[Console, io.StringIO]:
        from rich.console import Console

        color = use_color() if self.color is None else self.color
        width = self.width or (min(shutil.get_terminal_size().columns, 120) if color else 80)
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

    def _print(self, parts: Sequence[RenderableType]) -> str:
        console, buf = self._console()
        for part in parts:
            console.print(part)
        return "\n".join(line.rstrip() for line in buf.getvalue().split("\n"))

    def render(self, report: Report) -> str:
        from rich.text import Text

        rows = sanitize.clean(build_rows(report), sanitize.terminal)  # what the log wrote is shown, not obeyed
        if self.verbosity < 0:
            return rows.verdict_line + "\n"
        width = self.width or 80
        parts: list[RenderableType] = [_verdict_panel(rows, width), _facts(rows)]
        spark = sparkline(report, width=max(10, min(width, 120) - 12))
        if spark:
            parts.append(Text.assemble(("loss      ", "bold"), spark))
        parts.extend(_findings(rows, self.verbosity))
        parts.extend(_earlier(rows, self.verbosity))
        parts.extend(_verdict_evidence(rows, self.verbosity))
        if rows.stats_hint:
            parts.append(_bullet(rows.stats_hint, "hint: "))
        parts.extend(_bullet(n, "note: ", style="dim") for n in rows.notes)
        return self._print(parts)

    def render_outcomes(self, outcomes: Sequence[Outcome]) -> str:
        from rich import box
        from rich.table import Table

        body = [self.render(r) for r in self.per_run_reports(outcomes)]
        if len(outcomes) > 1 and self.verbosity >= 0:
            title = sanitize.terminal(summary_title(outcomes))
            table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
            for col in SUMMARY_HEADER:
                wrap = col == "worst problem"
                table.add_column(
                    col, justify="right" if col == "steps" else "left", overflow="fold", no_wrap=not wrap
                )
            for row in sanitize.clean(summary_rows(outcomes), sanitize.terminal):
                table.add_row(*row, style=status_style(row[2]).removeprefix("bold "))
            body.append(self._print([table]))
        return ("" if self.verbosity < 0 else "\n").join(body)


def _verdict_panel(rows: Rows, width: int = 80) -> Panel:
    """Health first: one line per problem (at most three, then ``+ N more``), the batching line,
    then what to do."""
    from rich import box
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    lines: list[RenderableType] = []
    inner = max(20, width - 4)
    for level, text in rows.headline:
        style = status_style(level) if level else ""
        label = f"{level.upper():<9}" if level else ""
        lines.append(Text.assemble((label, style), shorten_middle(text, inner - len(label))))
    lines.append(Text(rows.batching))
    if len(rows.todo) == 1:
        lines.append(Text.assemble(("What to do: ", "bold"), rows.todo[0]))
    elif rows.todo:
        lines.append(Text("What to do:", style="bold"))
        lines.extend(_bullet(hint, "- ") for hint in rows.todo)
    title = Text(f"logdoctor: {shorten_middle(rows.path, max(20, width - 17))}")  # a str title is markup
    return Panel(Group(*lines), title=title, title_align="left", box=box.ROUNDED)


def _facts(rows: Rows) -> Table:
    from rich.table import Table

    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for label, value in rows.facts:
        table.add_row(label, value)
    return table


def _findings(rows: Rows, verbosity: int) -> list[RenderableType]:
    """Each finding as a header line and its message below at full width (``-v``: its evidence,
    what to do, confidence and log line too); what is left out is said."""
    from rich.text import Text

    if not rows.findings:
        return [Text("No findings.", style="green")]
    entries, footer = finding_entries(rows, verbosity)
    out: list[RenderableType] = [Text("Findings", style="bold")] if entries else []
    for e in entries:
        if isinstance(e, str):
            out.append(_indented(f"({e})"))
            continue
        out.append(Text(header(e), style=severity_style(e.severity)))
        out.append(_indented(e.message))
        if verbosity > 0:
            conf = f"confidence {e.confidence}" + (f", log line {e.line}" if e.line else "")
            out.extend(_bullet(x) for x in (*e.evidence, conf))
            if e.hint:
                out.append(_indented(f"What to do: {e.hint}"))
    if footer:
        out.append(Text(footer))
    return out


def _verdict_evidence(rows: Rows, verbosity: int) -> list[RenderableType]:
    """The numbers behind a verdict that blames the batching (every verdict's with ``-v``)."""
    from rich.text import Text

    lines = rows.evidence_detail if verbosity > 0 else rows.evidence if rows.fault else ()
    if not lines:
        return []
    return [Text("Evidence behind the batching verdict", style="bold"), *(_bullet(s) for s in lines)]


def _bullet(text: str, lead: str = "  - ", style: str = "") -> Table:
    """``  - text`` whose wrapped lines hang under the text."""
    from rich.table import Table

    grid = Table.grid()
    grid.add_column(no_wrap=True, style=style)
    grid.add_column(overflow="fold", style=style)
    grid.add_row(lead, text)
    return grid


def _indented(text: str) -> Padding:
    from rich.padding import Padding
    from rich.text import Text

    return Padding(Text(text), (0, 0, 0, 2))


def _earlier(rows: Rows, verbosity: int) -> list[RenderableType]:
    """The earlier runs appended to the same log: one line per run with problems, then the rest
    summarised (``-v``: every problem of every earlier run)."""
    from rich.text import Text

    if not rows.earlier_title:
        return []
    lines = rows.earlier_detail if verbosity > 0 and rows.earlier_detail else ()
    rest = tuple(x for x in rows.earlier if not x.startswith("run ")) if lines else rows.earlier
    return [Text(rows.earlier_title, style="bold"), *(_bullet(x) for x in (*lines, *rest))]
