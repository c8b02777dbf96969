"""Rows shared by the text and Markdown reports: built once from a Report, formatted twice."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from logdoctor.model import (
    FRAME_FORMAT,
    LEN_MEAN,
    LINE_NO,
    LOSS,
    RECORDS_FORMAT,
    STEP,
    Finding,
    ObjectiveSummary,
    Outcome,
    Report,
    RunStructure,
)
from logdoctor.renderers.checks import checks_phrase
from logdoctor.renderers.evidence import evidence_sentences, format_value, plain_evidence
from logdoctor.renderers.labels import UNREADABLE, verdict_words
from logdoctor.renderers.runlines import earlier_detail, earlier_lines, earlier_title, runs_fact, worst_earlier_line
from logdoctor.renderers.samplerrows import sampler_facts
from logdoctor.structure.ending import EPOCH_PLAN_SOURCES, PLAN_SOURCES, source_words

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
    #: how many events of this kind the detector saw, when it reports only the largest (0: unknown)
    of_total: int = 0


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
    #: the verdict's evidence in plain words, without p-values or z-scores
    evidence: tuple[str, ...]
    notes: tuple[str, ...]
    #: the verdict's evidence in full, with its statistics and the keys no template knows (``-v``)
    evidence_detail: tuple[str, ...] = ()
    #: the run's health: ``ok``, ``warning`` or ``error``
    status: str = "ok"
    #: (level, text): ("ok", "No problems found"), or the worst unexplained problems, one each
    headline: tuple[tuple[str, str], ...] = ()
    #: the batching question in one line, said once
    batching: str = ""
    #: what to do about the problems in the headline (never the summary again)
    todo: tuple[str, ...] = ()
    #: earlier runs appended to the same log: a title, their lines, every problem (``-v``)
    earlier_title: str = ""
    earlier: tuple[str, ...] = ()
    earlier_detail: tuple[str, ...] = ()
    #: the hint to log batch statistics, where they would decide something (said once, at the end)
    stats_hint: str = ""
    #: the verdict blames the batching (its evidence is then shown without ``-v``)
    fault: bool = False


def step_range(f: Finding) -> str:
    """The steps a finding covers: ``"120"``, ``"120-180"``, ``"92-190, 1187-1313"`` (its
    separate stretches) or ``"run"``."""
    if f.first_step is None:
        return "run"
    if len(f.spans) > 1:
        return ", ".join(f"{a}-{b}" if b != a else str(a) for a, b in f.spans)
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
        of_total=_of_total(f),
    )


def _of_total(f: Finding) -> int:
    """The detector's count of events of this kind (``n_spikes`` on a loss spike), or 0."""
    n = f.evidence.get("n_spikes") if f.code == "LD101" else None
    return n if isinstance(n, int) and not isinstance(n, bool) else 0


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
    """The one line ``-q`` prints: path, health and worst problem, finding counts, batching verdict."""
    v = report.verdict
    worst = report.problems[0] if report.problems else None
    health = f"{worst.code} {worst.rule}" if worst else NO_PROBLEMS.lower()
    if (early := report.worst_earlier_run) is not None and report.status != report.run_status:
        f = early.findings[0]
        health = f"earlier run {early.index} of {early.of}: {f.code} {f.rule}; last run: {health}"
    bad = sum(1 for p in report.earlier_runs if p.findings)
    earlier = f"; earlier runs: {bad} of {len(report.earlier_runs)} with problems" if report.earlier_runs else ""
    return (
        f"{report.meta.path}: {report.status} ({health}); {count_phrase(report.findings)}; "
        f"batching: {verdict_words(v.batching).title.removeprefix('batching ')} ({v.confidence_text}){earlier}"
    )


def facts(report: Report) -> tuple[tuple[str, str], ...]:
    """The run at a glance as (label, value) pairs (a probe's: its steps, epochs and sampler)."""
    s, m = report.series, report.meta
    rng = f" (steps {s.first_step}-{s.last_step})" if s.steps > 1 else f" (step {s.first_step})"
    total = f" of {m.total_steps:,} planned" if m.total_steps else ""
    epochs = "unknown" if s.epochs is None else format_value(s.epochs)
    if s.steps_per_epoch:
        epochs += f" ({s.steps_per_epoch:,} steps each)"
    resumes = str(s.resumes)
    if m.resume_steps:
        resumes += " (at step " + ", ".join(str(x) for x in m.resume_steps) + ")"
    steps = f"{s.steps:,}{total}{rng}"
    if m.structure is not None:
        steps, epochs, resumes = structure_phrases(m.structure, resumes)
    if report.sampler is not None:  # a walk of the sampler: no log, no loss, no resume
        each = f" ({s.steps_per_epoch:,} steps each)" if s.steps_per_epoch else ""
        walked = (("steps", f"{s.steps:,} optimizer steps"), ("epochs", f"{report.sampler.epochs}{each}"))
        return (*walked, *sampler_facts(report.sampler))
    ending = (("ending", ending_phrase(m.structure)),) if m.structure is not None else ()
    dups = (
        (("duplicates", f"{m.structure.duplicates:,} records written twice, dropped"),)
        if (m.structure is not None and m.structure.duplicates)
        else ()
    )
    return (
        ("steps", steps),
        *ending,
        ("epochs", epochs),
        ("resumes", resumes),
        *dups,
        ("NaN/inf loss", f"{s.nonfinite_loss_steps:,} steps"),
        *((("other losses", objectives_phrase(s.objectives)),) if s.objectives else ()),
        ("columns", ", ".join(c for c in s.columns if c not in (STEP, LINE_NO)) or "none"),
        *((("checks", checks_phrase(report.checks)),) if report.checks else ()),
        ("log", _log_fact(report)),
        *_config_row(report),
        *runs_fact(report),
    )


#: How many other objectives the report names before "and N more".
OBJECTIVES_SHOWN = 6


def objectives_phrase(objectives: Sequence[ObjectiveSummary]) -> str:
    """``loss_disc 2.71 -> 2.62, loss_kl 5.02 -> 1.19 (3 NaN/inf)`` (median of the first and last tenth)."""
    parts = []
    for o in objectives[:OBJECTIVES_SHOWN]:
        trend = f"{format_value(o.first)} -> {format_value(o.last)}" if o.first is not None else "no finite value"
        parts.append(f"{o.name} {trend}" + (f" ({o.nonfinite:,} NaN/inf)" if o.nonfinite else ""))
    more = f" and {len(objectives) - OBJECTIVES_SHOWN} more" if len(objectives) > OBJECTIVES_SHOWN else ""
    return ", ".join(parts) + more + " (first and last tenth, median)"


#: How many problems the headline lists before "+ N more".
HEADLINE_MAX = 3
#: Findings whose whole content is the batching line (said once, there).
BATCHING_LINE_CODES = frozenset({"LD504"})
NO_PROBLEMS = "No problems found"
#: the headline of a run with no problem, too short for some checks (LD006): what was not checked
NO_PROBLEMS_SHORT = "Nothing found in {rows} rows; skipped {skipped}"
#: the headline's second line when only an earlier run appended to the log had problems
LAST_RUN_OK = "the last run in this log (this report): no problems found"
_EMIT_HINT = "log seqs, tokens, len_min, len_max and batch_fp each step (logdoctor.emit)"


def problem_phrase(group: Sequence[Finding]) -> str:
    """One problem in one line: ``LD101 loss-spike, step 412`` or ``LD101 loss-spike x10, steps 3-900``."""
    f = group[0]
    if len(group) == 1:
        return f"{f.code} {f.rule}, {where(f)}"
    firsts = [g.first_step for g in group if g.first_step is not None]
    lasts = [g.last_step if g.last_step is not None else g.first_step for g in group if g.first_step is not None]
    span = f", steps {min(firsts)}-{max(x for x in lasts if x is not None)}" if firsts else ""
    return f"{f.code} {f.rule} x{len(group)}{span}"


def problem_groups(report: Report) -> list[list[Finding]]:
    """The report's problems grouped by code, worst first (a code's findings are one problem)."""
    groups: dict[str, list[Finding]] = {}
    for f in report.problems:
        groups.setdefault(f.code, []).append(f)
    return list(groups.values())


def no_problems(report: Report) -> str:
    """``No problems found``, or, when the run was too short for some checks (LD006), which ones did
    not run: a short run's silence is not a clean bill of health."""
    short = next((f for f in report.findings if f.code == "LD006"), None)
    if short is None or not short.evidence.get("skipped"):
        return NO_PROBLEMS
    skipped = str(short.evidence["skipped"]).replace(",", ", ")
    return NO_PROBLEMS_SHORT.format(rows=short.evidence.get("n_steps", report.run.n_steps), skipped=skipped)


def headline(report: Report) -> tuple[tuple[str, str], ...]:
    """``(("ok", "No problems found"),)`` or (severity, one line) per worst problem, then ``+ N more``.

    The lines name the problem and where; its message is said once, in the findings list.
    """
    groups = problem_groups(report)
    earlier = worst_earlier_line(report)  # the file's status covers its earlier runs: name the worst
    if not groups:
        return (("ok", no_problems(report)),) if earlier is None else (earlier, ("", LAST_RUN_OK))
    lines = [(g[0].severity.label, problem_phrase(g)) for g in groups[:HEADLINE_MAX]]
    rest = sum(len(g) for g in groups[HEADLINE_MAX:])
    if rest:
        lines.append(("", f"+ {rest} more problem{'s' if rest > 1 else ''}: see Findings"))
    return tuple(lines) if earlier is None else (earlier, *lines)


def plot_health(report: Report) -> str:
    """The health in a title: ``No problems found`` or ``ERROR divergence, steps 3-62 (+2 more)``."""
    problems = report.problems
    if not problems:
        return no_problems(report)
    f = problems[0]
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{f.severity.label.upper()} {f.rule}, {where(f)}{more}"


def batching_line(report: Report) -> str:
    """The batching question in one line: decided (with its cause) or why it is not."""
    v = report.verdict
    if v.batching == "inconclusive":
        return f"Batching: not decidable from this log ({v.cause})"
    if v.batching == "not_batching" and (report.status == "ok" or v.evidence.get("cause_is_problem") is False):
        return f"Batching: no batching fault; the loss shows {v.cause}"
    if v.batching == "not_batching":
        return f"Batching: not the cause; the problem comes from {v.cause} (confidence {v.confidence_text})"
    title = verdict_words(v.batching).title
    cause = "" if v.cause == title else f" - {v.cause}"
    return f"Batching: {title} (confidence {v.confidence_text}){cause}"


#: Problems that batch statistics could attribute (or clear): a periodic loss may be length order or
#: megabatches, spikes may follow long batches. Only these make the hint to log them worth a line.
DECIDED_BY_BATCH_STATS = frozenset({"LD101", "LD103", "LD201", "LD202"})


def stats_hint(report: Report) -> str:
    """The hint to log batch statistics, once, where they would decide something; else ``""``."""
    if report.verdict.batching != "inconclusive" or report.run.has(LEN_MEAN):
        return ""
    open_ = [f for f in report.problems if f.code in DECIDED_BY_BATCH_STATS]
    if not open_:
        return ""
    what = " and ".join(dict.fromkeys("the periodic loss" if f.code.startswith("LD2") else "the spikes" for f in open_))
    return f"To tell whether batching causes {what}: {_EMIT_HINT}."


def todo(report: Report) -> tuple[str, ...]:
    """The hints of the headline problems, each once."""
    seen: list[str] = []
    for f in report.problems[:HEADLINE_MAX]:
        if f.hint and f.hint not in seen:
            seen.append(f.hint)
    return tuple(seen)


def _log_fact(report: Report) -> str:
    """``text, 5,887 lines (3,428 without a step)``; counts records when ``\r`` split lines."""
    m = report.meta
    if m.records_read > m.lines_read:
        return (
            f"{m.format}, {m.lines_read:,} lines split at progress-bar redraws (\\r) into "
            f"{m.records_read:,} records ({m.lines_skipped:,} records without a step)"
        )
    unit = "rows" if m.format in (FRAME_FORMAT, RECORDS_FORMAT) else "lines"  # handed over in memory
    return f"{m.format}, {m.lines_read:,} {unit} ({m.lines_skipped:,} without a step)"


#: How each epoch source reads in the report.
_EPOCH_SOURCES = {
    "column": "the epoch column",
    "marker_lines": "epoch marker lines",
    "progress_bar": "progress bars",
    "batch_counter": "the per-epoch batch counter",
    "two_level": "a per-epoch step counter",
    "inferred": "planned steps / planned epochs",
    "given": "--steps-per-epoch",
}
#: How a per-epoch step counter's length was read (RunStructure.steps_per_epoch_source), said after
#: its epoch source.
_COUNTER_LENGTHS = {
    "cumulative_counter": " and the running total beside it",
    "global_counter": " and the global step beside it",
    "largest_step": "; its largest value, a lower bound",
    "stated_total": "; the total it prints (s/N)",
}


#: How each ending reads.
_ENDINGS = {
    "finished": "finished",
    "early_stopped": "stopped by early stopping",
    "interrupted": "stopped by hand (Ctrl-C)",
    "cancelled": "cancelled (scancel, no reason named)",
    "terminated": "stopped by the system (a time limit, preemption or SIGTERM)",
    "crashed": "crashed",
    "stopped": "stopped before its plan, no error printed",
    "running": "still running",
    "unknown": "unknown",
}


def ending_phrase(st: RunStructure) -> str:
    """How the run ended and against which plan, each with its source: ``crashed (line 294: the
    GPU ran out of memory); planned 10,000 steps (the config dump), reached 6,200``."""
    said = _ENDINGS.get(st.ending, st.ending)
    why = f"line {st.failure.line}: {st.failure.cause}" if st.failure is not None else source_words(st.ending_source)
    if st.failure is None and st.ending_source == f"planned {st.planned_source}" and st.planned:
        why = ""  # the plan's source is said with the plan
    if st.failure is None and st.ending_source == f"planned epochs {st.planned_epochs_source}" and not st.planned:
        why = ""
    out = f"{said} ({why})" if why else said
    if st.planned:
        source = PLAN_SOURCES.get(st.planned_source or "", st.planned_source)
        out += f"; planned {st.planned:,} steps" + (f" ({source})" if source else "")
        out += f", reached {st.last_step:,}" if st.last_step is not None else ""
    elif st.planned_epochs:
        source = EPOCH_PLAN_SOURCES.get(st.planned_epochs_source or "", st.planned_epochs_source)
        out += f"; planned {st.planned_epochs:,} epochs" + (f" ({source})" if source else "")
        out += f", reached epoch {st.last_epoch:g}" if st.last_epoch is not None else ""
    else:
        out += "; no planned length stated"
    return out


def structure_phrases(st: RunStructure, resumes: str) -> tuple[str, str, str]:
    """(steps, epochs, resumes) facts from the run's structure: rows, stride, last step and plan
    apart (``100 rows every 50 steps, steps 50-5000 of 5,000 planned: finished``)."""
    every = f" every {st.stride:,} steps" if st.stride and st.stride > 1 else ""
    span = f"steps {st.first_step}-{st.last_step}" if st.rows > 1 else f"step {st.first_step}"
    plan = f" of {st.planned:,} planned" if st.planned else ""
    accum = f" (gradient accumulation {st.grad_accum})" if st.grad_accum and st.grad_accum > 1 else ""
    steps = f"{st.rows:,} row{'s' if st.rows != 1 else ''}{every}, {span}{plan}{accum}"
    if st.rows == 0:
        steps = f"0 rows: no training step logged{plan}"
    epochs = "unknown" if st.epochs is None else str(st.epochs)
    if st.steps_per_epoch:
        spe = st.steps_per_epoch
        each = f"{int(spe):,}" if spe == int(spe) else f"{spe:,.1f}"
        source = _EPOCH_SOURCES.get(st.epoch_source or "", st.epoch_source)
        length = _COUNTER_LENGTHS.get(st.steps_per_epoch_source or "", "")
        at_least = "at least " if st.steps_per_epoch_source == "largest_step" else ""
        origin = f", from {source}{length}" if source else ""  # a reader that gives no source: none said
        epochs += f" ({at_least}{each} steps each{origin})"
    if st.restarts:
        seen = Counter((r.kind.replace("_", " "), r.step) for r in st.restarts)
        parts = [f"{kind} at step {step}" + (f" (x{n})" if n > 1 else "") for (kind, step), n in seen.items()]
        resumes = f"{len(st.restarts)} (" + ", ".join(parts[:6]) + (", ..." if len(parts) > 6 else "") + ")"
    return steps, epochs, resumes


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
    return Rows(
        path=report.meta.path,
        verdict_line=verdict_line(report),
        verdict_title=verdict_words(v.batching).title,
        confidence=v.confidence_text,
        cause=v.cause,
        summary=v.summary,
        hint=v.hint,
        facts=facts(report),
        findings=tuple(finding_row(f) for f in ordered),
        evidence=tuple(plain_evidence(v.evidence)),
        notes=(*report.meta.notes, *report.notes, *(report.sampler.notes if report.sampler else ())),
        evidence_detail=tuple(evidence_sentences(v.evidence)),
        status=report.status,
        headline=headline(report),
        batching=batching_line(report),
        todo=todo(report),
        earlier_title=earlier_title(report),
        earlier=earlier_lines(report),
        earlier_detail=earlier_detail(report),
        stats_hint=stats_hint(report),
        fault=verdict_words(v.batching).fault,
    )


def loss_buckets(report: Report, width: int = 60) -> np.ndarray:
    """The loss downsampled to ``width`` bucket means of its finite values (NaN where there are none)."""
    loss = report.run.table[LOSS].to_numpy().astype(float) if report.run.table.height else np.empty(0)
    if loss.size == 0:
        return loss
    edges = np.linspace(0, loss.size, min(width, loss.size) + 1).astype(int)
    finite = np.isfinite(loss)
    counts = np.add.reduceat(finite.astype(int), edges[:-1])
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):  # losses near ±1e308 overflow sums
        sums = np.add.reduceat(np.where(finite, loss, 0.0), edges[:-1])
        means: np.ndarray = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return means


def spark_blocks(means: Sequence[float] | np.ndarray) -> str:
    """Bucket means as unicode blocks, lowest to highest ("·" for a NaN bucket)."""
    means = np.asarray(means, dtype=float)
    if means.size == 0:
        return ""
    ok = ~np.isnan(means)  # NaN: a bucket without a finite loss (an overflowed sum stays inf, as drawn)
    if not ok.any():
        return "·" * means.size
    lo, hi = float(means[ok].min()), float(means[ok].max())
    with np.errstate(invalid="ignore", over="ignore"):
        scale = (means - lo) / (hi - lo) if hi > lo else np.zeros_like(means)
    idx = np.clip((np.nan_to_num(scale) * (len(SPARK_BLOCKS) - 1)).round().astype(int), 0, 7)
    return "".join(SPARK_BLOCKS[i] if good else "·" for i, good in zip(idx, ok, strict=True))


def sparkline(report: Report, width: int = 60) -> str:
    """The loss as unicode blocks, downsampled to ``width`` bucket means ("·" where all NaN); none
    for a probe of the sampler (no model ran, there is no loss)."""
    if report.sampler is not None:
        return ""
    return spark_blocks(loss_buckets(report, width))


SUMMARY_HEADER = ("run", "steps", "status", "worst problem", "batching")


def shorten_middle(text: str, width: int) -> str:
    """``text`` cut in the middle with ``…`` to at most ``width`` characters (the ends stay readable)."""
    if len(text) <= width:
        return text
    if width < 5:
        return text[:width]
    keep = width - 1
    head = keep // 3
    return text[:head] + "…" + text[len(text) - (keep - head) :]


def common_dir(paths: Sequence[str]) -> str:
    """The directory prefix (with its trailing ``/``) that all ``paths`` share, or ``""``."""
    if len(paths) < 2:
        return ""
    import os.path

    try:
        common = os.path.commonpath([os.path.dirname(p) for p in paths])
    except ValueError:  # absolute and relative paths mixed
        return ""
    return common.rstrip("/") + "/" if common else ""


def summary_title(outcomes: Sequence[Outcome]) -> str:
    """``Summary`` or ``Summary (in DIR)`` when all runs share a directory."""
    base = common_dir([o.path for o in outcomes])
    return f"Summary (in {base})" if base else "Summary"


def summary_rows(outcomes: Sequence[Outcome], run_width: int = 22) -> list[tuple[str, str, str, str, str]]:
    """One row per run for the many-runs summary: run, steps, status, worst problem, batching.

    No exit column: ``analyze`` exits 0 with findings, and ``check``'s exit follows ``--fail-on``.
    """
    rows = []
    base = common_dir([o.path for o in outcomes])
    for o in outcomes:
        name = shorten_middle(o.path[len(base) :], run_width)
        if o.report is None:
            why = (o.error or "").removeprefix(f"{o.path}: ").split(" (")[0]
            rows.append((name, "-", UNREADABLE, why, "-"))
            continue
        r = o.report
        worst = r.problems[0] if r.problems else None
        worst_txt = worst.rule if worst else "none"
        rows.append((name, f"{r.series.steps:,}", r.status, worst_txt, verdict_words(r.verdict.batching).short))
    return rows
