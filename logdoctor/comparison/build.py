"""Compare a baseline report with candidate reports: findings, symptoms, cost, quality, the answer."""

from __future__ import annotations

from collections.abc import Sequence

from logdoctor import pipeline
from logdoctor.comparison import comparable, findings, likewise, quality, symptoms
from logdoctor.comparison.result import Comparison, FindingRef, Matched, Outcome, Symptom, Versus
from logdoctor.comparison.series import run_series
from logdoctor.config import AnalysisConfig
from logdoctor.errors import ConfigError, InputError
from logdoctor.model import Report, Severity
from logdoctor.renderers.labels import verdict_words

#: The candidate is too short for some analyses: what it does not show may simply be unmeasured.
TOO_SHORT = "LD006"


def _loss_regression(matched: Sequence[Matched]) -> list[str]:
    """A worse loss beyond noise at the last matched token count (the last matched step without tokens)."""
    points = matched_on_tokens(matched) or list(matched)
    if points and points[-1].worse:
        m = points[-1]
        return [f"loss at {m.at:.4g} {m.axis} higher by {m.diff:.3g} (95% CI {m.ci_low:.3g}..{m.ci_high:.3g})"]
    return []


def matched_on_tokens(matched: Sequence[Matched]) -> list[Matched]:
    """The points matched by tokens."""
    return [m for m in matched if m.axis == "tokens"]


def _outcome(
    base: Report, cand: Report, resolved: Sequence[FindingRef], matched: Sequence[Matched], regressions: Sequence[str]
) -> Outcome:
    """Batching counts as fixed only when the candidate is judged healthy (or not a batching
    problem); a candidate too short or too thin to decide has not shown that any fault is gone.
    A lower loss beyond noise at the last matched point counts as an improvement too."""
    undecided = cand.verdict.batching == "inconclusive" or any(f.code == TOO_SHORT for f in cand.findings)
    # a verdict that blames the batching (renderers/labels.py) left for a decided, blameless one
    batching_fixed = (
        verdict_words(base.verdict.batching).fault and not undecided and not verdict_words(cand.verdict.batching).fault
    )
    other_fixed = not undecided and any(
        r.severity >= Severity.WARNING and not r.code.startswith("LD5") for r in resolved
    )
    last = (matched_on_tokens(matched) or list(matched))[-1:]
    fixed = batching_fixed or other_fixed or any(m.better for m in last)
    if regressions:
        return "mixed" if fixed else "regressed"
    return "worked" if fixed else "unchanged"


def _ratio(syms: Sequence[Symptom]) -> float | None:
    tp = next((s for s in syms if s.name == "throughput"), None)
    if tp is None or not tp.baseline or tp.candidate is None:
        return None
    return tp.candidate / tp.baseline


def compare_reports(base: Report, cand: Report, *, seed: int = 0) -> Versus:
    """One candidate against the baseline."""
    span = max(base.series.steps, cand.series.steps, 1)
    resolved, new, persisting = findings.match(base.findings, cand.findings, span)
    sb, sc = run_series(base.run), run_series(cand.run)
    syms = [*symptoms.symptoms(base, cand, sb, sc), *quality.reach(sb, sc)]
    cycle_steps, cycle_tokens, like = likewise.cycles(base, cand, sb, sc)
    matched, why = quality.compare_loss(sb, sc, seed, cycle_steps, cycle_tokens)
    regressions = [*findings.new_trouble(base.findings, new), *_loss_regression(matched)]
    return Versus(
        candidate=cand,
        resolved=resolved,
        new=new,
        persisting=persisting,
        throughput_ratio=_ratio(syms),
        symptoms=tuple(syms),
        matched=tuple(matched),
        not_comparable=tuple(why),
        regressions=tuple(regressions),
        outcome=_outcome(base, cand, resolved, matched, regressions),
        like_with_like=like,
    )


def _one_input(arg: str) -> str:
    """The single run an argument names (a glob or folder must name exactly one)."""
    found = pipeline.expand_inputs([arg])
    if len(found) != 1:
        raise InputError(f"{arg}: names {len(found)} runs; compare takes one run per argument")
    return found[0]


def refuse_unrelated(base: Report, cands: Sequence[Report]) -> None:
    """InputError ``not comparable: <why>`` when a candidate is not the baseline's experiment."""
    for cand in cands:
        why = comparable.reasons(base, cand)
        if why:
            raise InputError(
                f"{base.meta.path} (baseline) and {cand.meta.path}: not comparable: {'; '.join(why)} "
                "(--force compares anyway)"
            )


def compare_paths(
    baseline: str,
    candidates: Sequence[str],
    cfg: AnalysisConfig | None = None,
    jobs: int | None = None,
    *,
    seed: int = 0,
    force: bool = False,
) -> Comparison:
    """Analyse the baseline and every candidate (in parallel, as ``analyze``) and compare them.

    Raises:
        InputError / ParseError: an input cannot be read (the first such error, as one line), or
            a candidate is not the same experiment as the baseline (unless ``force``).
        ConfigError: no candidate, or the same standard input twice.
    """
    if not candidates:
        raise ConfigError("compare needs a baseline and at least one candidate")
    inputs = [_one_input(p) for p in (baseline, *candidates)]
    if inputs.count("-") > 1:
        raise ConfigError("standard input (-) can be only one of the runs")
    unique = list(dict.fromkeys(inputs))  # the same file named twice is analysed once
    done = dict(zip(unique, pipeline.analyze_paths(unique, cfg, jobs), strict=True))
    for outcome in done.values():
        if outcome.report is None:
            error = outcome.error or "cannot be analysed"
            raise InputError(error if outcome.path in error else f"{outcome.path}: {error}")
    reports = [done[p].report for p in inputs]
    base, *cands = [r for r in reports if r is not None]
    return compare_analysed(base, cands, seed=seed, force=force)


def compare_analysed(base: Report, cands: Sequence[Report], *, seed: int = 0, force: bool = False) -> Comparison:
    """Compare reports already made (``compare_paths`` makes them from paths, the Python API from
    anything it reads). InputError for a candidate that is not the baseline's experiment, unless ``force``."""
    if not cands:
        raise ConfigError("compare needs a baseline and at least one candidate")
    for r in (base, *cands):
        if r.run.table.height == 0:  # its crash is the whole report: ``analyze`` gives it
            raise InputError(f"{r.meta.path}: the run stopped before its first logged step: no curve to compare")
    if not force:
        refuse_unrelated(base, cands)
    return Comparison(base, tuple(compare_reports(base, c, seed=seed) for c in cands))
