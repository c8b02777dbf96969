"""Checks of the text report's layout at 80 columns, shared by the fixture and real-log tests."""

from __future__ import annotations

import json
import math
import re
from unittest import mock

from rich.cells import cell_len

from logdoctor.model import Evidence, Report
from logdoctor.renderers import console
from logdoctor.renderers.console import ConsoleRenderer
from logdoctor.renderers.evidence import format_for, is_statistic

WIDTH = 80
#: Statistics the default text report leaves to ``-v`` and JSON (plain words first): p-values,
#: z and t scores, robust SDs, nulls.
STATISTICS = re.compile(
    r"\bp ?[=<>]|\bp-value|\bz ?=|\bz-score|robust z|robust SD|\bMAD\b|\bnull\b|\bt ?= ?-?\d|F-test|\bsigmas\b"
)
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


def statistics_in(text: str) -> list[str]:
    """Each statistic the text shows, with the words around it (``[]`` when it speaks plainly)."""
    flat = _flat(text)
    return [flat[max(0, m.start() - 60) : m.end() + 20] for m in STATISTICS.finditer(flat)]


def _statistics(ev: Evidence) -> dict[str, object]:
    return {k: v for k, v in ev.items() if is_statistic(k) and v is not None}


def statistics_kept(report: Report) -> list[str]:
    """Each statistic of a finding's or the verdict's evidence that ``-v`` does not show or the
    JSON report does not carry unchanged (``[]`` when every one is kept)."""
    from logdoctor.renderers.jsonreport import JsonRenderer

    verbose = _flat(render_text(report, 1))
    doc = json.loads(JsonRenderer().render(report))
    pairs = [(f.evidence, d["evidence"]) for f, d in zip(report.findings, doc["findings"], strict=True)]
    pairs.append((report.verdict.evidence, doc["verdict"]["evidence"]))
    lost = []
    for ev, written in pairs:
        for k, v in _statistics(ev).items():
            if isinstance(v, float) and math.isfinite(v) and written.get(k) != v:
                lost.append(f"JSON {k}: {written.get(k)!r} != {v!r}")
            if format_for(k, v) not in verbose:
                lost.append(f"-v does not show {k} = {format_for(k, v)}")
    return lost


def render_text(report: Report, verbosity: int = 0) -> str:
    """The text report as a user at an 80-column terminal without colour sees it."""
    text = ConsoleRenderer(color=False, width=WIDTH, verbosity=verbosity).render(report)
    with mock.patch.object(console, "plain_ok", lambda *_: False):  # drawn by rich: the same text
        assert ConsoleRenderer(color=False, width=WIDTH, verbosity=verbosity).render(report) == text
    return text
