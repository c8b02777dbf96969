"""The human report in the terminal, drawn with rich from the shared rows."""

from __future__ import annotations

import io
import os
import shutil
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from logdoctor.model import Outcome, Report
from logdoctor.renderers.base import Renderer
from logdoctor.renderers.labels import severity_style, status_style
from logdoctor.renderers.rows import (
    SUMMARY_HEADER,
    Rows,
    build_rows,
    listed_findings,
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

        rows = build_rows(report)
        if self.verbosity < 0:
            return rows.verdict_line + "\n"
        width = self.width or 80
        parts: list[RenderableType] = [_verdict_panel(rows, report, width), _facts(rows)]
        spark = sparkline(report, width=max(10, min(width, 120) - 12))
        if spark:
            parts.append(Text.assemble(("loss      ", "bold"), spark))
        parts.append(_findings(rows, self.verbosity))
        if self.verbosity > 0:
            parts.extend(_details(rows))
        parts.extend(_earlier(rows, self.verbosity))
        if rows.evidence:
            parts.append(Text("Evidence behind the verdict", style="bold"))
            parts.extend(_indented(f"- {s}") for s in rows.evidence)
            if self.verbosity > 0:
                parts.extend(_indented(f"- {s}") for s in rows.evidence_detail)
        parts.extend(Text(f"note: {n}", style="dim") for n in rows.notes)
        return self._print(parts)

    def render_outcomes(self, outcomes: Sequence[Outcome]) -> str:
        from rich import box
        from rich.table import Table

        body = [self.render(r) for r in self.per_run_reports(outcomes)]
        if len(outcomes) > 1 and self.verbosity >= 0:
            table = Table(
                title=summary_title(outcomes), box=box.SIMPLE_HEAD, title_justify="left", show_edge=False
            )
            for col in SUMMARY_HEADER:
                wrap = col == "worst problem"
                table.add_column(
                    col, justify="right" if col == "steps" else "left", overflow="fold", no_wrap=not wrap
                )
            for row in summary_rows(outcomes):
                table.add_row(*row, style=status_style(row[2]).removeprefix("bold "))
            body.append(self._print([table]))
        return ("" if self.verbosity < 0 else "\n").join(body)


def _verdict_panel(rows: Rows, report: Report, width: int = 80) -> Panel:
    """Health first: the status and the worst problems, the batching line, then what to do."""
    from rich import box
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    lines: list[RenderableType] = []
    for level, text in rows.headline:
        style = status_style(level) if level else ""
        lines.append(Text.assemble((f"{level.upper():<9}", style), text) if level else Text(text))
    lines.append(Text(rows.batching))
    if len(rows.todo) == 1:
        lines.append(Text.assemble(("What to do: ", "bold"), rows.todo[0]))
    elif rows.todo:
        lines.append(Text("What to do:", style="bold"))
        lines.extend(Text(f"- {hint}") for hint in rows.todo)
    title = f"logdoctor: {shorten_middle(rows.path, max(20, width - 17))}"
    return Panel(Group(*lines), title=title, title_align="left", box=box.ROUNDED)


def _facts(rows: Rows) -> Table:
    from rich.table import Table

    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for label, value in rows.facts:
        table.add_row(label, value)
    return table


def _findings(rows: Rows, verbosity: int) -> RenderableType:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    if not rows.findings:
        return Text("No findings.", style="green")
    table = Table(title="Findings", box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
    for col in ("level", "code"):
        table.add_column(col, no_wrap=True)
    table.add_column("rule", overflow="fold")
    table.add_column("steps", overflow="fold")
    table.add_column("message", overflow="fold", ratio=1)
    listed, more = listed_findings(rows, verbosity)
    if more:
        table.caption, table.caption_justify = more, "left"
    for f in listed:
        style = severity_style(f.severity)
        table.add_row(
            Text(f.severity, style=style), Text(f.code, style=style), f.rule, f.steps, f.message
        )
    return table


def _details(rows: Rows) -> list[RenderableType]:
    """Per-finding detail for ``-v``: evidence in words, what to do, confidence and log line."""
    from rich.text import Text

    out: list[RenderableType] = []
    for f in rows.findings:
        loc = f.where + (f", log line {f.line}" if f.line else "")
        out.append(
            Text.assemble(
                (f"{f.code} {f.rule}", "bold"), f" ({f.severity}, {loc}, confidence {f.confidence})"
            )
        )
        out.extend(_indented(f"- {e}") for e in f.evidence)
        if f.hint:
            out.append(_indented(f"What to do: {f.hint}"))
    return out


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
    return [Text(rows.earlier_title, style="bold"), *(_indented(f"- {x}") for x in (*lines, *rest))]
