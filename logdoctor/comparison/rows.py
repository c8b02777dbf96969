"""The rows and the one-line answer shared by the text and Markdown views of a comparison (no statistics)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import PurePath

from logdoctor.comparison.result import Comparison, FindingRef, Matched, Symptom, Versus
from logdoctor.model import Report, Severity
from logdoctor.renderers.labels import verdict_words

Row = tuple[str, str, str, str]

OPENERS = {
    "worked": "The fix worked",
    "mixed": "Mixed result",
    "regressed": "Regression",
    "unchanged": "No clear change",
}


def count(n: float) -> str:
    """A count or amount, short: 950, 12.3k, 2.5M, 1.2G."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= div:
            return f"{n / div:.3g}{suffix}"
    return f"{n:.4g}"


def value(s: Symptom, x: float | None) -> str:
    """A symptom's value as its unit prints."""
    if x is None:
        return "—"
    if s.unit == "x":
        return f"{x:.3g}×"
    if s.unit == "fraction":
        return f"{100 * x:.1f}%"
    if s.unit == "rho":
        return f"{x:+.2f}"
    if s.unit == "rate":
        return f"{x:.3g}"
    return count(x)


def name(report: Report) -> str:
    """A run's file name."""
    return PurePath(report.meta.path).name or report.meta.path


def tally(report: Report) -> str:
    """Errors / warnings / info."""
    n = [sum(f.severity == s for f in report.findings) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)]
    return " / ".join(map(str, n))


def loss_change(m: Matched) -> str:
    """The difference of one matched point, with its noise, and whether it is worse beyond it."""
    tail = "" if m.change == "unclear" else f"  {m.change}"
    return f"{m.diff:+.3f} ± {m.half_width:.3f}{tail}"


def where(m: Matched) -> str:
    """'1.9M tokens' or 'step 648'."""
    return f"{count(m.at)} tokens" if m.axis == "tokens" else f"step {m.at:.0f}"


def refs(items: Sequence[FindingRef]) -> str:
    """Findings as 'LD502 static-composition (error)' (with '×3' for several of a kind), or a dash."""
    kinds = Counter((r.code, r.rule, r.severity.label) for r in items)
    return ", ".join(f"{c} {rule} ({sev})" + (f" ×{n}" if n > 1 else "") for (c, rule, sev), n in kinds.items()) or "—"


def rows(base: Report, v: Versus) -> list[Row]:
    """The side-by-side table: label, baseline, candidate, change."""
    c = v.candidate
    b_v, c_v = base.verdict.batching, c.verdict.batching
    out: list[Row] = [
        ("run", name(base), name(c), ""),
        ("batching verdict", b_v, c_v, "" if b_v == c_v else f"{b_v} → {c_v}"),
        ("errors / warnings / info", tally(base), tally(c), ""),
        ("last step", count(base.series.last_step or 0), count(c.series.last_step or 0), ""),
    ]
    for s in v.symptoms:
        label = s.label
        if s.at_baseline != s.at_candidate:
            label += f" ({s.at_baseline:.4g} / {s.at_candidate:.4g} st)"
        change = f"{v.throughput_ratio:.1%}" if s.name == "throughput" and v.throughput_ratio else ""
        out.append((label, value(s, s.baseline), value(s, s.candidate), change))
    for m in v.matched:
        out.append((f"loss @ {where(m)}", f"{m.baseline:.4g}", f"{m.candidate:.4g}", loss_change(m)))
    out += [(f"loss @ {why.split(':')[0]}", "not comparable", "", why.split(": ", 1)[-1]) for why in v.not_comparable]
    return out


def changes(v: Versus) -> list[tuple[str, str]]:
    """Resolved, new and persisting findings, then the reasons for a regression."""
    out = [("resolved", refs(v.resolved)), ("new", refs(v.new)), ("persisting", refs(v.persisting))]
    return out + [("regression", r) for r in v.regressions]


def _power(v: Versus) -> str | None:
    s = v.symptom("periodic_power") or v.symptom("epoch_power")
    if s is None or s.baseline is None or s.candidate is None:
        return None
    at = "the epoch" if s.name == "epoch_power" else f"{s.at_baseline:.3g} steps"
    return f"power at {at} {value(s, s.baseline)} → {value(s, s.candidate)}"


def answer(base: Report, v: Versus) -> str:
    """The one-line answer: did it work, and what did it cost."""
    parts = []
    b_v, c_v = base.verdict.batching, v.candidate.verdict.batching
    if b_v != c_v:
        parts.append(f"{verdict_words(b_v).title} → {verdict_words(c_v).title}")
    still = {r.code for r in (*v.persisting, *v.new)}
    before = {r.code for r in (*v.persisting, *v.resolved)}
    gone = [r.code for r in v.resolved if r.severity >= Severity.WARNING and r.code not in still]
    came = [r.code for r in v.new if r.severity >= Severity.WARNING and r.code not in before]
    parts += [f"{', '.join(dict.fromkeys(gone))} resolved"] if gone else []
    parts += [f"new {', '.join(dict.fromkeys(came))}"] if came else []
    power = _power(v)
    parts += [power] if power else []
    if v.throughput_ratio is not None:
        parts.append(f"throughput {v.throughput_ratio:.0%} of before")
    last = (v.on("tokens") or v.on("steps"))[-1:]
    parts += [f"loss at {where(m)} {m.diff:+.2f} ± {m.half_width:.2f}" for m in last]
    parts += [] if last else ["loss not comparable (the runs do not overlap)"]
    return f"{OPENERS[v.outcome]}: {', '.join(parts)}."


def answers(c: Comparison) -> list[str]:
    """One answer per candidate (prefixed by its name when there are several)."""
    if len(c.versus) == 1:
        return [answer(c.baseline, c.versus[0])]
    return [f"{name(v.candidate)}: {answer(c.baseline, v)}" for v in c.versus]
