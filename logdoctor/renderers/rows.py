"""Rows shared by the text and Markdown reports: built once from a Report, formatted twice."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from logdoctor.model import LINE_NO, LOSS, STEP, Finding, Outcome, Report
from logdoctor.renderers.evidence import evidence_sentences, format_value, split_evidence

#: How each batching verdict reads to a person.
VERDICT_TITLES: dict[str, str] = {
    "sorted": "length-sorted batches",
    "static": "static batch composition",
    "healthy": "healthy batching",
    "not_batching": "not a batching problem",
    "inconclusive": "batching inconclusive",
}


SPARK_BLOCKS = "▁▂▃▄▅▆▇█"


@dataclass(frozen=True, slots=True)
class FindingRow:
    """One finding, every field already text."""

    code: str
    rule: str
    severity: str
    steps: str
    where: str
    message: str
    hint: str
    line: str
    confidence: str
    evidence: tuple[str, ...]
    #: the verdict rule that explains this finding as a symptom ("" when none)
    explained_by: str = ""


@dataclass(frozen=True, slots=True)
class Rows:
    """Everything the human reports show, as text."""

    path: str
    verdict_line: str
    verdict_title: str
    confidence: str
    cause: str
    summary: str
    hint: str
    facts: tuple[tuple[str, str], ...]
    findings: tuple[FindingRow, ...]
    evidence: tuple[str, ...]
    notes: tuple[str, ...]
    #: the verdict's remaining evidence as ``key: value`` lines (shown with ``-v``)
    evidence_detail: tuple[str, ...] = ()


def step_range(f: Finding) -> str:
    """The steps a finding covers: ``"120"``, ``"120-180"`` or ``"run"``."""
    if f.first_step is None:
        return "run"
    if f.last_step is None or f.last_step == f.first_step:
        return str(f.first_step)
    return f"{f.first_step}-{f.last_step}"


def where(f: Finding) -> str:
    """``"step 412"``, ``"steps 1-600"`` or ``"whole run"``, for sentences."""
    rng = step_range(f)
    return "whole run" if rng == "run" else ("steps " if "-" in rng else "step ") + rng


def finding_row(f: Finding) -> FindingRow:
    """The text cells of one finding."""
    return FindingRow(
        code=f.code,
        rule=f.rule,
        severity=f.severity.label,
        steps=step_range(f),
        where=where(f),
        message=f.message,
        hint=f.hint,
        line="" if f.line is None else str(f.line),
        confidence=f"{f.confidence:.0%}",
        evidence=tuple(evidence_sentences(f.evidence)),
        explained_by=str(f.evidence.get("explained_by") or ""),
    )


def listed_findings(rows: Rows, verbosity: int) -> tuple[tuple[FindingRow, ...], str]:
    """The findings to list, and a line standing for the ones left out.

    Without ``-v``, findings the verdict explains as symptoms (e.g. a level change at every length
    reset of a sorted run) are counted in one line instead of listed one by one.
    """
    if verbosity > 0:
        return rows.findings, ""
    shown = tuple(f for f in rows.findings if not f.explained_by)
    hidden = [f for f in rows.findings if f.explained_by]
    if not hidden:
        return shown, ""
    causes = ", ".join(sorted({f.explained_by for f in hidden}))
    codes = ", ".join(sorted({f.code for f in hidden}))
    return shown, f"+ {len(hidden)} more ({codes}) explained as symptoms of {causes}; -v lists them"


def count_phrase(findings: Sequence[Finding]) -> str:
    """``"3 findings (1 error, 2 warnings)"`` or ``"no findings"``."""
    if not findings:
        return "no findings"
    parts = []
    for label in ("error", "warning", "info"):
        n = sum(f.severity.label == label for f in findings)
        if n:
            parts.append(f"{n} {label}" + ("s" if n > 1 and label != "info" else ""))
    return f"{len(findings)} finding{'s' if len(findings) > 1 else ''} ({', '.join(parts)})"


def verdict_line(report: Report) -> str:
    """The one line ``-q`` prints: path, verdict, confidence, cause and finding counts."""
    v = report.verdict
    cause = "" if v.cause == VERDICT_TITLES[v.batching] else f" - {v.cause}"
    return (
        f"{report.meta.path}: {VERDICT_TITLES[v.batching]} ({v.confidence:.0%}){cause}; {count_phrase(report.findings)}"
    )


def facts(report: Report) -> tuple[tuple[str, str], ...]:
    """The run at a glance as (label, value) pairs."""
    s, m = report.series, report.meta
    rng = f" (steps {s.first_step}-{s.last_step})" if s.steps > 1 else f" (step {s.first_step})"
    total = f" of {m.total_steps:,} planned" if m.total_steps else ""
    epochs = "unknown" if s.epochs is None else format_value(s.epochs)
    if s.steps_per_epoch:
        epochs += f" ({s.steps_per_epoch:,} steps each)"
    resumes = str(s.resumes)
    if m.resume_steps:
        resumes += " (at step " + ", ".join(str(x) for x in m.resume_steps) + ")"
    return (
        ("steps", f"{s.steps:,}{total}{rng}"),
        ("epochs", epochs),
        ("resumes", resumes),
        ("NaN/inf loss", f"{s.nonfinite_loss_steps:,} steps"),
        ("columns", ", ".join(c for c in s.columns if c not in (STEP, LINE_NO)) or "none"),
        ("log", f"{m.format}, {m.lines_read:,} lines ({m.lines_skipped:,} without a step)"),
        *_config_row(report),
    )


def _config_row(report: Report) -> tuple[tuple[str, str], ...]:
    """("config", "epochs=8, grad_accum=4 (wandb config)") when the source stated any; the JSON
    names each fact's key."""
    stated = report.meta.config_facts
    if not stated:
        return ()
    origins = ", ".join(dict.fromkeys(f.source.rsplit(" ", 1)[0] for f in stated))
    return (("config", ", ".join(f"{f.name}={f.value}" for f in stated) + f" ({origins})"),)


def build_rows(report: Report) -> Rows:
    """All rows of the human report, findings in the order the report holds them (by severity)."""
    v = report.verdict
    ordered = sorted(report.findings, key=lambda f: -f.severity)
    known, rest = split_evidence(v.evidence)
    return Rows(
        path=report.meta.path,
        verdict_line=verdict_line(report),
        verdict_title=VERDICT_TITLES[v.batching],
        confidence=f"{v.confidence:.0%}",
        cause=v.cause,
        summary=v.summary,
        hint=v.hint,
        facts=facts(report),
        findings=tuple(finding_row(f) for f in ordered),
        evidence=tuple(known),
        notes=(*report.meta.notes, *report.notes),
        evidence_detail=tuple(rest),
    )


def sparkline(report: Report, width: int = 60) -> str:
    """The loss as unicode blocks, downsampled to ``width`` bucket means ("·" where all NaN)."""
    loss = report.run.table[LOSS].to_numpy().astype(float) if report.run.table.height else np.empty(0)
    if loss.size == 0:
        return ""
    edges = np.linspace(0, loss.size, min(width, loss.size) + 1).astype(int)
    finite = np.isfinite(loss)
    sums = np.add.reduceat(np.where(finite, loss, 0.0), edges[:-1])
    counts = np.add.reduceat(finite.astype(int), edges[:-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    ok = counts > 0
    if not ok.any():
        return "·" * means.size
    lo, hi = float(means[ok].min()), float(means[ok].max())
    scale = (means - lo) / (hi - lo) if hi > lo else np.zeros_like(means)
    idx = np.clip((np.nan_to_num(scale) * (len(SPARK_BLOCKS) - 1)).round().astype(int), 0, 7)
    return "".join(SPARK_BLOCKS[i] if good else "·" for i, good in zip(idx, ok, strict=True))


def summary_rows(outcomes: Sequence[Outcome]) -> list[tuple[str, str, str, str, str]]:
    """One row per run for the many-runs summary: run, steps, verdict, worst finding, exit."""
    rows = []
    for o in outcomes:
        if o.report is None:
            rows.append((o.path, "-", "error", o.error or "", str(int(o.exit_code))))
            continue
        r = o.report
        worst = max(r.findings, key=lambda f: f.severity, default=None)
        worst_txt = f"{worst.code} {worst.rule} ({worst.severity.label})" if worst else "none"
        rows.append((o.path, f"{r.series.steps:,}", r.verdict.batching, worst_txt, str(int(o.exit_code))))
    return rows
