"""The JSON report: the versioned machine-readable contract of ``analyze --format json``."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from logdoctor import sanitize
from logdoctor.model import (
    ConfigFact,
    Evidence,
    Finding,
    LogEvent,
    Outcome,
    Report,
    RunMeta,
    RunPart,
    RunStructure,
    Verdict,
)
from logdoctor.renderers.base import Renderer
from logdoctor.renderers.checks import check_dicts
from logdoctor.samplerfacts import SamplerProfile, Spread

#: Version of the JSON document. Changelog:
#:   1 - first release: source, series, verdict, findings. Several inputs: a list whose items
#:       are report documents, or error documents ``{format_version, source: {path}, error}``.
#:       (still 1) a single input that fails prints its error document alone (it printed nothing).
#:   2 - top-level ``status`` (ok | warning | error): the worst severity among the findings that
#:       are not explained as symptoms (info findings leave it ok).
#:       Also adds ``structure``: rows, stride, planned vs reached, epochs and their source, restarts,
#:       metric columns, duplicates (structure/layout.py; docs/formats.md). Additive; readers of 1 still work.
#:       Also: ``verdict.batching`` may be ``"grouped"`` (length-grouped megabatches, LD505).
#:       Also (compatible) ``source.config_facts``: ``[{name, value, source}]`` when the run's
#:       configuration states facts (W&B config, MLflow params); absent otherwise.
#:       Also (compatible) ``structure.running_mean`` / ``running_mean_slopes``: columns printed as
#:       running means since the epoch began, read back as per-interval means (structure/runmean.py).
#:   3 - ``runs``: one entry per fresh run appended to the log (``index``, ``first_line``/``last_line``,
#:       ``first_step``/``last_step``, ``rows``, ``status``, ``too_short``, ``current``, ``findings``: its
#:       problems with their evidence), each analysed on its own; the last is the report's own run
#:       (``current``), whose status stays the top-level ``status``. ``[]`` for a log of one run. Additive.
#:       Also (compatible) ``source.degenerate``: ``{max_line, lines_cut, nul_bytes, nul_runs: [{offset, size}]}``
#:       when NUL runs were skipped or over-long lines cut (ingest/bounded.py); absent otherwise.
#:   4 - top-level ``status`` is the file's: the worst of every run appended to the log (a log whose
#:       earlier run diverged is ``error`` even when its last run is fine); ``run_status`` is the last
#:       run's own (the old meaning of ``status``; equal to it for a log of one run).
#:       ``verdict.confidence`` is ``null`` for an ``inconclusive`` verdict (it decided nothing).
#:       Also (compatible) a finding's ``spans``: ``[[first, last], ...]``, its separate stretches
#:       when it covers more than one (``first_step``/``last_step`` are their hull); absent otherwise.
#:       Also (compatible) ``sampler``: what ``logdoctor probe`` measured walking the sampler (the
#:       chain, the walk, padding and tokens per batch, recurrence against chance, the priced fix);
#:       absent from a report on a log.
#:       Also (compatible) ``structure.ending`` (finished | early_stopped | interrupted | cancelled |
#:       terminated | crashed | stopped | running | unknown) and ``ending_source`` (``line N``, ``planned column``...),
#:       ``planned_epochs``/``planned_epochs_source``/``last_epoch``, ``failure`` (the event that ended
#:       the run: ``{kind, role, line, block_line, text, cause}``) and ``events`` (the run's other
#:       failure events, same fields). ``runs`` items add ``ending``/``ending_source``, and list each
#:       launch that logged no step (``rows`` 0, its lines up to the failure that ended it).
#:       Also (compatible) ``checks``: every check the analysis made, in order, ``{name, ran, skipped}``
#:       (``skipped``: why it could not run, e.g. ``too few rows``, ``no eval metric``; null when it
#:       ran), so that no findings reads "among these checks"; ``[]`` when no analysis made the report.
#:       Also (compatible) ``series.objectives``: the log's other objectives (loss parts beside the
#:       analysed loss), ``{name, rows, first, last, nonfinite}``; ``[]`` for a log of one loss.
FORMAT_VERSION = 4


def _clean(value: Any) -> Any:
    """JSON has no NaN/inf: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _evidence(ev: Evidence) -> dict[str, Any]:
    return {k: _clean(v) for k, v in ev.items()}


def finding_dict(f: Finding) -> dict[str, Any]:
    """One finding as the JSON contract spells it."""
    return {
        "code": f.code,
        "rule": f.rule,
        "severity": f.severity.label,
        "confidence": round(f.confidence, 4),
        "first_step": f.first_step,
        "last_step": f.last_step,
        "line": f.line,
        "message": f.message,
        "hint": f.hint,
        "evidence": _evidence(f.evidence),
    } | ({"spans": [list(s) for s in f.spans]} if f.spans else {})


def verdict_dict(v: Verdict) -> dict[str, Any]:
    """The batching verdict as the JSON contract spells it."""
    return {
        "batching": v.batching,
        "confidence": None if v.confidence is None else round(v.confidence, 4),
        "cause": v.cause,
        "summary": v.summary,
        "hint": v.hint,
        "evidence": _evidence(v.evidence),
    }


def structure_dict(st: RunStructure | None) -> dict[str, Any] | None:
    """The run's structure as the JSON contract spells it (None when it was not resolved)."""
    if st is None:
        return None
    return {
        "rows": st.rows,
        "first_step": st.first_step,
        "last_step": st.last_step,
        "stride": st.stride,
        "stride_source": st.stride_source,
        "grad_accum": st.grad_accum,
        "planned": st.planned,
        "planned_source": st.planned_source,
        "finished": st.finished,
        "ending": st.ending,
        "ending_source": st.ending_source,
        "planned_epochs": st.planned_epochs,
        "planned_epochs_source": st.planned_epochs_source,
        "last_epoch": _clean(st.last_epoch),
        "failure": _event(st.failure) if st.failure is not None else None,
        "events": [_event(e) for e in st.events],
        "epochs": st.epochs,
        "steps_per_epoch": _clean(st.steps_per_epoch),
        "epoch_source": st.epoch_source,
        "steps_per_epoch_source": st.steps_per_epoch_source,
        "restarts": [{"step": r.step, "kind": r.kind, "source": r.source} for r in st.restarts],
        "metrics": list(st.metrics),
        "eval_metrics": list(st.eval_metrics),
        "duplicates": st.duplicates,
        "running_mean": list(st.running_mean),
        "running_mean_slopes": list(st.running_mean_slopes),
    }


def _event(e: LogEvent) -> dict[str, Any]:
    return {
        "kind": e.kind,
        "role": e.role,
        "line": e.line,
        "block_line": e.block_line,
        "text": e.text,
        "cause": e.cause,
    }


def run_part_dict(p: RunPart) -> dict[str, Any]:
    """One run appended to the log, as the JSON contract spells it (since format_version 3)."""
    return {
        "index": p.index,
        "first_line": p.first_line,
        "last_line": p.last_line,
        "first_step": p.first_step,
        "last_step": p.last_step,
        "rows": p.rows,
        "status": p.status,
        "too_short": p.too_short,
        "current": p.current,
        "ending": p.ending,
        "ending_source": p.ending_source,
        "findings": [finding_dict(f) for f in p.findings],
    }


def _config_facts(facts: Sequence[ConfigFact]) -> dict[str, Any]:
    """``{"config_facts": [...]}`` when there are any, else nothing (older documents unchanged)."""
    if not facts:
        return {}
    return {"config_facts": [{"name": f.name, "value": f.value, "source": f.source} for f in facts]}


def _degenerate(m: RunMeta) -> dict[str, Any]:
    """``{"degenerate": {...}}`` when NUL runs were skipped or lines cut, else nothing."""
    if not (m.lines_cut or m.nul_bytes):
        return {}
    runs = [{"offset": r.offset, "size": r.size} for r in m.nul_runs]
    return {
        "degenerate": {"max_line": m.max_line, "lines_cut": m.lines_cut, "nul_bytes": m.nul_bytes, "nul_runs": runs}
    }


def _spread(s: Spread | None) -> dict[str, float] | None:
    if s is None:
        return None
    return {"mean": s.mean, "median": s.median, "p5": s.p5, "p95": s.p95, "min": s.low, "max": s.high}


def sampler_dict(p: SamplerProfile) -> dict[str, Any]:
    """A probe's sampler profile as the JSON contract spells it."""
    f = p.fix
    fix = (
        None
        if f is None
        else {
            "buckets": f.buckets,
            "boundaries": list(f.boundaries),
            "token_budget": f.token_budget,
            "sequences": f.sequences,
            "padding_efficiency": {
                "random": f.efficiency_random,
                "sorted": f.efficiency_sorted,
                "bucketed": f.efficiency_bucketed,
            },
            "relative_throughput": {
                "bucketed_vs_sorted": f.bucketed_vs_sorted,
                "bucketed_vs_random": f.bucketed_vs_random,
                "bucketed_vs_this": f.bucketed_vs_this,
            },
        }
    )
    return {
        "target": p.target,
        "chain": p.chain,
        "samples": p.samples,
        "epochs": p.epochs,
        "batches": p.batches,
        "steps": p.steps,
        "batch_size": p.batch_size,
        "world_size": p.world_size,
        "ranks": p.ranks,
        "grad_accum": p.grad_accum,
        "set_epoch": list(p.set_epoch),
        "bounded": p.bounded,
        "max_batches": p.max_batches,
        "lengths_source": p.lengths_source,
        "padding_efficiency": _clean(p.efficiency),
        "padding_efficiency_per_batch": _spread(p.padding),
        "tokens_per_batch": _spread(p.tokens),
        "padded_tokens_per_batch": _spread(p.padded),
        "recurrence": p.recurrence,
        "recurrence_by_epoch": list(p.recurrence_by_epoch),
        "recurrence_chance": p.recurrence_chance,
        "fix": fix,
        "notes": list(p.notes),
    }


def report_dict(report: Report) -> dict[str, Any]:
    """The whole report as a JSON-ready dict."""
    m, s, v = report.meta, report.series, report.verdict
    return {
        "format_version": FORMAT_VERSION,
        "status": report.status,
        "run_status": report.run_status,
        "source": {
            "path": m.path,
            "format": m.format,
            "lines_read": m.lines_read,
            "lines_skipped": m.lines_skipped,
            "skip_reasons": dict(m.skip_reasons),
            "aliases": dict(sorted(m.aliases.items())),  # one order whatever the hash seed
            "notes": list(m.notes),
            **_config_facts(m.config_facts),
            **_degenerate(m),
        },
        "series": {
            "steps": s.steps,
            "first_step": s.first_step,
            "last_step": s.last_step,
            "has_acc": s.has_acc,
            "has_length_stats": s.has_length_stats,
            "steps_per_epoch": s.steps_per_epoch,
            "epochs": _clean(s.epochs),
            "total_steps": m.total_steps,
            "resumes": s.resumes,
            "duplicate_steps": s.duplicate_steps,
            "nonfinite_loss_steps": s.nonfinite_loss_steps,
            "columns": list(s.columns),
            "objectives": [
                {
                    "name": o.name,
                    "rows": o.rows,
                    "first": _clean(o.first),
                    "last": _clean(o.last),
                    "nonfinite": o.nonfinite,
                }
                for o in s.objectives
            ],
        },
        "verdict": verdict_dict(v),
        "findings": [finding_dict(f) for f in report.findings],
        "structure": structure_dict(m.structure),
        "runs": [run_part_dict(p) for p in report.runs],
        "checks": check_dicts(report.checks),
    } | ({"sampler": sampler_dict(report.sampler)} if report.sampler is not None else {})


class JsonRenderer(Renderer):
    """``--format json``: one JSON document (a list of documents for several runs)."""

    name = "json"
    documents_errors = True
    extension = ".json"

    def render(self, report: Report) -> str:
        return _dumps(report_dict(report))

    def render_many(self, reports: Sequence[Report]) -> str:
        if len(reports) == 1:
            return self.render(reports[0])
        return _dumps([report_dict(r) for r in reports])

    def render_outcomes(self, outcomes: Sequence[Outcome]) -> str:
        if len(outcomes) == 1 and outcomes[0].report is not None:
            return self.render(outcomes[0].report)
        if len(outcomes) == 1:  # one input that failed: its error document, as README's "JSON output"
            return _dumps(error_dict(outcomes[0]))
        docs = [report_dict(o.report) if o.report else error_dict(o) for o in outcomes]
        return _dumps(docs)


def _dumps(doc: object) -> str:
    """The document as JSON: its strings raw (it is data; json escapes them), URL credentials redacted."""
    return json.dumps(sanitize.clean(doc, sanitize.redact), indent=2, allow_nan=False) + "\n"


def error_dict(outcome: Outcome) -> dict[str, Any]:
    """An input that could not be analysed, as an item of the many-runs list."""
    return {
        "format_version": FORMAT_VERSION,
        "source": {"path": outcome.path},
        "error": {"message": outcome.error or "", "exit_code": int(outcome.exit_code)},
    }


def loads(text: str) -> Mapping[str, Any]:
    """Parse a JSON report back (for tests and tools)."""
    doc: Mapping[str, Any] = json.loads(text)
    return doc
