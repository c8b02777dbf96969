"""The one table of words and colours for every verdict kind, severity and status label.

Every renderer (and ``compare``) reads these; none keeps a partial table of its own. Adding a verdict
kind to ``model.BATCHING_LABELS`` without its words here fails at import, so no renderer can miss it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from logdoctor.model import BATCHING_LABELS, Severity


@dataclass(frozen=True, slots=True)
class VerdictWords:
    """How one batching verdict reads: a title for sentences, a short cell, terminal and web colours."""

    title: str
    short: str
    style: str
    colour: str
    #: the verdict blames batching (a fault the user should fix or knowingly keep)
    fault: bool


VERDICT_WORDS: Mapping[str, VerdictWords] = {
    "sorted": VerdictWords("length-sorted batches", "sorted", "bold red", "#d62728", True),
    "static": VerdictWords("static batch composition", "static", "bold red", "#d62728", True),
    "grouped": VerdictWords("length-grouped megabatches", "grouped", "bold yellow", "#ff7f0e", True),
    "healthy": VerdictWords("healthy batching", "healthy", "bold green", "#2ca02c", False),
    "not_batching": VerdictWords("not a batching problem", "not cause", "bold cyan", "#1f77b4", False),
    "inconclusive": VerdictWords("batching inconclusive", "undecided", "bold yellow", "#7f7f7f", False),
}

_missing = set(BATCHING_LABELS) ^ set(VERDICT_WORDS)
if _missing:  # a new verdict kind must get its words here before any renderer can run
    raise RuntimeError(f"renderers/labels.py lacks words for verdict kinds {sorted(_missing)}")

#: The report statuses (``Report.status``), mildest first.
STATUS_LABELS: tuple[str, ...] = ("ok", "warning", "error")
STATUS_STYLE: Mapping[str, str] = {"ok": "bold green", "warning": "bold yellow", "error": "bold red"}
#: How an input that could not be read shows in a status column.
UNREADABLE = "unreadable"

SEVERITY_STYLE: Mapping[Severity, str] = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
SEVERITY_COLOURS: Mapping[Severity, str] = {
    Severity.ERROR: "#d62728",
    Severity.WARNING: "#ff7f0e",
    Severity.INFO: "#7f7f7f",
}
if set(SEVERITY_STYLE) != set(Severity) or set(SEVERITY_COLOURS) != set(Severity):
    raise RuntimeError("renderers/labels.py lacks a style or colour for a severity")


def verdict_words(kind: str) -> VerdictWords:
    """The words of one verdict kind (``KeyError`` cannot happen for a validated Verdict)."""
    return VERDICT_WORDS[kind]


def severity_style(label: str) -> str:
    """The terminal style of a severity label (``"warning"`` -> ``"yellow"``)."""
    return SEVERITY_STYLE[Severity.parse(label)]


def severity_colour(label: str) -> str:
    """The web colour of a severity label."""
    return SEVERITY_COLOURS[Severity.parse(label)]


def status_style(status: str) -> str:
    """The terminal style of a status; an unreadable input reads as an error."""
    return STATUS_STYLE["error" if status == UNREADABLE else status]
