"""Rows shared by the text and Markdown reports: built once from a Report, formatted twice."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from logdoctor.model import LINE_NO, LOSS, STEP, Evidence, EvidenceValue, Finding, Outcome, Report

#: How each batching verdict reads to a person.
VERDICT_TITLES: dict[str, str] = {
    "sorted": "length-sorted batches",
    "static": "static batch composition",
    "healthy": "healthy batching",
    "not_batching": "not a batching problem",
    "inconclusive": "batching inconclusive",
}

#: Known evidence keys: (keys that must all be present, sentence template). The first template
#: whose keys are all present consumes them; keys no template knows are written generically.
EVIDENCE_TEMPLATES: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("len_loss_rho", "len_loss_p"),
        "loss vs batch mean length: Spearman ρ = {len_loss_rho}, {len_loss_p}",
    ),
    (("len_loss_rho",), "loss vs batch mean length: Spearman ρ = {len_loss_rho}"),
    (("len_order_rho",), "batch length vs position in the epoch: Spearman ρ = {len_order_rho}"),
    (("sorted_epoch_frac",), "{sorted_epoch_frac} of epochs are ordered by batch length"),
    (("recurrence_frac",), "{recurrence_frac} of batch signatures recur in every epoch"),
    (("fresh_batch_frac",), "{fresh_batch_frac} of batches are new in each epoch"),
    (
        ("period_steps", "steps_per_epoch"),
        "loss period {period_steps} steps, epoch length {steps_per_epoch} steps",
    ),
    (("period_steps",), "loss period: {period_steps} steps"),
    (("peak_power_ratio",), "periodogram peak {peak_power_ratio}× the median power"),
    (("period_p",), "period significance: {period_p}"),
    (("robust_z",), "loss {robust_z} robust standard deviations (MAD) above its local median"),
    (("grad_norm_z",), "gradient norm {grad_norm_z} robust standard deviations above its median"),
    (("n_spikes", "n_steps"), "{n_spikes} spikes in {n_steps} steps"),
    (("n_spikes",), "{n_spikes} spikes"),
    (
        ("nonfinite_steps", "first_bad_step"),
        "{nonfinite_steps} steps with NaN/inf loss, the first at step {first_bad_step}",
    ),
    (("nonfinite_steps",), "{nonfinite_steps} steps with NaN/inf loss"),
    (("level_before", "level_after"), "loss level {level_before} before, {level_after} after"),
    (("lr_period_steps",), "learning-rate schedule period: {lr_period_steps} steps"),
    (("lr_loss_rho",), "loss vs learning rate: Spearman ρ = {lr_loss_rho}"),
    (("resume_step",), "run resumed at step {resume_step}"),
)

_KIND_BY_SUFFIX: tuple[tuple[str, str], ...] = (
    ("_p", "p"),
    ("_frac", "pct"),
    ("_rho", "r"),
    ("_steps", "int"),
    ("_step", "int"),
    ("n_", "int"),
)

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


def _kind(key: str) -> str:
    for suffix, kind in _KIND_BY_SUFFIX:
        if key.endswith(suffix) or (suffix.endswith("_") and key.startswith(suffix)):
            return kind
    return "num"


def format_p(p: float) -> str:
    """A p-value in words: ``p < 1e-9`` below 1e-9, else ``p = 0.0031`` (two significant digits)."""
    if p < 1e-9:
        return "p < 1e-9"
    return f"p = {p:.2g}"


def format_value(value: EvidenceValue, kind: str = "num") -> str:
    """One evidence value as text, by kind (p, pct, r, int, num)."""
    if value is None:
        return "n/a"
    if isinstance(value, bool | str):
        return str(value).lower() if isinstance(value, bool) else value
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if kind == "p":
        return format_p(float(value))
    if kind == "pct":
        return f"{float(value):.0%}"
    if kind == "r":
        return f"{float(value):.2f}"
    if isinstance(value, int) or (kind == "int" and float(value).is_integer()):
        return f"{int(value):,}"
    return f"{float(value):.3g}"


def evidence_sentences(ev: Evidence) -> list[str]:
    """Evidence in plain words: known keys through their templates, the rest generically."""
    left = dict(ev)
    out: list[str] = []
    for keys, template in EVIDENCE_TEMPLATES:
        if all(k in left for k in keys):
            out.append(template.format(**{k: format_value(left.pop(k), _kind(k)) for k in keys}))
    out += [f"{k.replace('_', ' ')}: {format_value(v, _kind(k))}" for k, v in left.items()]
    return out


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
    )


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
        f"{report.meta.path}: {VERDICT_TITLES[v.batching]} ({v.confidence:.0%}){cause}; "
        f"{count_phrase(report.findings)}"
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
    )


def build_rows(report: Report) -> Rows:
    """All rows of the human report, findings in the order the report holds them (by severity)."""
    v = report.verdict
    ordered = sorted(report.findings, key=lambda f: -f.severity)
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
        evidence=tuple(evidence_sentences(v.evidence)),
        notes=(*report.meta.notes, *report.notes),
    )


def sparkline(report: Report, width: int = 60) -> str:
    """The loss as unicode blocks, downsampled to ``width`` bucket means ("·" where all NaN)."""
    loss = (
        report.run.table[LOSS].to_numpy().astype(float) if report.run.table.height else np.empty(0)
    )
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
        rows.append(
            (o.path, f"{r.series.steps:,}", r.verdict.batching, worst_txt, str(int(o.exit_code)))
        )
    return rows
