"""The JSON document of `compare --format json`: versioned, with the shipped schema compare.schema.json."""

from __future__ import annotations

import json
import math
from typing import Any

from logdoctor import sanitize
from logdoctor.comparison.result import Comparison, FindingRef, Matched, Symptom, Versus
from logdoctor.renderers.jsonreport import report_dict

#: Version of the compare document. Changelog:
#:   1 - first release: baseline, candidate (candidates when several), resolved, new, persisting,
#:       throughput_ratio, symptoms, loss_at_matched.
#:       Also (additive): each matched point's ``practical`` (the smallest difference that matters)
#:       and ``change`` (better | worse | same | unclear); ``like_with_like`` (why the loss windows
#:       span whole length cycles, "" when they do not).
FORMAT_VERSION = 1


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 6)


def _ref(f: FindingRef) -> dict[str, Any]:
    return {
        "code": f.code,
        "rule": f.rule,
        "severity": f.severity.label,
        "first_step": f.first_step,
        "last_step": f.last_step,
    }


def _symptom(s: Symptom) -> dict[str, Any]:
    out: dict[str, Any] = {"baseline": _num(s.baseline), "candidate": _num(s.candidate), "unit": s.unit}
    if s.at_baseline is not None:
        out |= {"at_baseline": _num(s.at_baseline), "at_candidate": _num(s.at_candidate)}
    return out


def _point(m: Matched) -> dict[str, Any]:
    return {
        "at": _num(m.at),
        "baseline": _num(m.baseline),
        "candidate": _num(m.candidate),
        "diff": _num(m.diff),
        "ci_low": _num(m.ci_low),
        "ci_high": _num(m.ci_high),
        "practical": _num(m.practical),
        "change": m.change,
    }


def versus_dict(v: Versus) -> dict[str, Any]:
    """One candidate against the baseline (the candidate's full report under ``candidate``)."""
    return {
        "candidate": report_dict(v.candidate),
        "resolved": [_ref(f) for f in v.resolved],
        "new": [_ref(f) for f in v.new],
        "persisting": [_ref(f) for f in v.persisting],
        "throughput_ratio": _num(v.throughput_ratio),
        "symptoms": {s.name: _symptom(s) for s in v.symptoms},
        "loss_at_matched": {axis: [_point(m) for m in v.on(axis)] for axis in ("steps", "tokens")},
        "like_with_like": v.like_with_like,
    }


def comparison_dict(c: Comparison) -> dict[str, Any]:
    """The whole comparison: one candidate flat beside the baseline, several as a ``candidates`` list."""
    head = {"format_version": FORMAT_VERSION, "baseline": report_dict(c.baseline)}
    if len(c.versus) == 1:
        return head | versus_dict(c.versus[0])
    return head | {"candidates": [versus_dict(v) for v in c.versus]}


def render_json(c: Comparison) -> str:
    """The comparison as indented JSON (no NaN: unknown numbers are null; credentials redacted)."""
    doc = sanitize.clean(comparison_dict(c), sanitize.redact)
    return json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
