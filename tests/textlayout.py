"""Checks of the text report's layout at 80 columns, shared by the fixture and real-log tests."""

from __future__ import annotations

import re

from rich.cells import cell_len

from logdoctor.model import Report
from logdoctor.renderers.console import ConsoleRenderer

WIDTH = 80
_SEVERITIES = ("error ", "warning ", "info ")


def _flat(text: str) -> str:
    """The report's words with box borders and line breaks gone (a wrapped message reads whole)."""
    return re.sub(r"\s+", " ", re.sub(r"[│╭╮╰╯─]", " ", text)).strip()


def layout_problems(text: str, report: Report) -> list[str]:
    """What breaks the 80-column layout: long lines, a message said twice, a heading with nothing under it."""
    lines = text.split("\n")
    bad = [f"line {i + 1} is {cell_len(x)} columns: {x!r}" for i, x in enumerate(lines) if cell_len(x) > WIDTH]
    flat = _flat(text)
    for msg in dict.fromkeys(f.message for f in report.findings):
        key = _flat(msg)[:70]
        if len(key) > 20 and flat.count(key) > 1:
            bad.append(f"message printed {flat.count(key)} times: {key!r}")
    for i, x in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if x == "Findings" and not nxt.startswith(_SEVERITIES):
            bad.append(f"empty findings list at line {i + 1}")
        if x.startswith("Evidence behind") and not nxt.startswith("  - "):
            bad.append(f"empty evidence list at line {i + 1}")
        if set(x.strip()) == {"─"} and not nxt.strip():
            bad.append(f"empty table at line {i + 1}")
    return bad


def render_text(report: Report, verbosity: int = 0) -> str:
    """The text report as a user at an 80-column terminal without colour sees it."""
    return ConsoleRenderer(color=False, width=WIDTH, verbosity=verbosity).render(report)
