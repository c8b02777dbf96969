"""Attribute detector findings to the fault that caused them: a jump at a length reset or at a
resume is a symptom, not a second problem.

When the verdict says batches are length-sorted, the loss jumps, accuracy drops and periods that
the detectors report at the length resets (or epoch boundaries) are consequences of that one fault;
likewise the level change and loss rise right after a resume (which LD004 already reports). They
stay in the report, lowered to info and annotated with their cause, so the user sees one finding to
act on instead of a page of warnings that all say the same thing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from logdoctor.diagnosis.facts import Facts
from logdoctor.diagnosis.thresholds import EPOCH_PERIOD_TOLERANCE
from logdoctor.model import Finding, Severity, Verdict

#: Findings whose step a length-sorted order can explain.
_STEP_CODES = frozenset({"LD101", "LD301", "LD302", "LD401", "LD402", "LD403"})
#: Sustained trends that a length-sorted order explains when they stay inside one epoch or window
#: (the loss drifts with batch length between two resets).
_TREND_CODES = frozenset({"LD401", "LD403"})
#: Findings about the whole run that a length-sorted order explains when its period matches.
_PERIOD_CODES = frozenset({"LD103", "LD201"})


def _boundaries(facts: Facts) -> np.ndarray:
    marks: list[int] = []
    if facts.order is not None:
        marks.extend(facts.order.resets)
    if facts.epochs is not None:
        marks.extend(int(s) for s in facts.epochs.starts)
    return np.unique(np.asarray(marks, dtype=np.int64))


def _spacing(facts: Facts) -> float | None:
    if facts.order is not None and facts.order.reset_spacing:
        return float(facts.order.reset_spacing)
    if facts.epochs is not None and facts.epochs.steps_per_epoch:
        return float(facts.epochs.steps_per_epoch)
    return None


_CAUSE_TEXT = {
    "sorted-batching": "the length-sorted order",
    "grouped-batching": "the length-grouped megabatches",
    "epoch-staircase": "the epoch staircase",
    "static-batching": "the fixed batch order",
    "batching-undecidable": "the length order within windows",
    "batch-length": "the batch length",
    "cyclic-lr": "the cyclic learning rate",
}


def _explain(f: Finding, why: str, boundary: int | None, by: str = "sorted-batching") -> Finding:
    evidence = {**f.evidence, "explained_by": by}
    if boundary is not None:
        evidence["explained_at_step"] = boundary
    cause = _CAUSE_TEXT.get(by, "the resume")
    return dataclasses.replace(
        f, severity=Severity.INFO, message=f"{f.message} Explained by {cause}: {why}.", evidence=evidence
    )


def _after_resume(f: Finding, resumes: np.ndarray, tol: float) -> int | None:
    """The resume step a step finding starts at (within ``tol`` steps after it), if any."""
    if f.code not in _STEP_CODES or f.first_step is None or not resumes.size:
        return None
    gap = f.first_step - resumes
    hits = resumes[(gap >= 0) & (gap <= tol)]
    return int(hits[-1]) if hits.size else None


def _within_segment(f: Finding, marks: np.ndarray, tol: float) -> int | None:
    """The reset that opens the segment holding the finding's whole span, if no reset cuts it."""
    if f.first_step is None:
        return None
    first = f.first_step
    last = f.last_step if f.last_step is not None else first
    before = marks[marks <= first]
    inside = marks[(marks > first + tol) & (marks < last - tol)]
    return int(before[-1]) if before.size and not inside.size else None


def _length_divergence(findings: list[Finding], verdict: Verdict, facts: Facts) -> list[Finding]:
    """A divergence the length-adjusted loss does not show (``facts.length_explained``) is the
    batching's symptom: folded into the verdict's cause (the batch length when the verdict names
    no length order)."""
    if not facts.length_explained:
        return findings
    if verdict.batching in ("sorted", "grouped"):
        by = f"{verdict.batching}-batching"
    else:
        by = "batching-undecidable" if "reset_inside_epoch" in verdict.evidence else "batch-length"
    out = []
    for f in findings:
        if f.code == "LD002" and f.first_step in facts.length_explained and "explained_by" not in f.evidence:
            f = _explain(
                f,
                "the rise comes with longer batches, and with batch length accounted for (the loss compared "
                "at the same length, or with its length effect removed) it is no divergence",
                f.first_step,
                by=by,
            )
        out.append(f)
    return out


def _staircase_drops(findings: list[Finding], facts: Facts, row: float) -> list[Finding]:
    """Under an epoch staircase, a loss level drop at an epoch boundary is one of its steps (one rule
    for every run: the drop is the staircase, not a separate regime change)."""
    if facts.shape is None or not facts.shape.staircase or facts.epochs is None:
        return findings
    starts = np.asarray(facts.epochs.starts[1:], dtype=np.int64)
    spe = facts.epochs.steps_per_epoch or 0
    tol = max(2 * row, 0.05 * spe)
    out = []
    for f in findings:
        change = f.evidence.get("relative_change")
        drop = isinstance(change, int | float) and change < 0
        if f.code == "LD301" and drop and f.first_step is not None and starts.size and "explained_by" not in f.evidence:
            near = int(starts[np.argmin(np.abs(starts - f.first_step))])
            if abs(near - f.first_step) <= tol:
                f = _explain(f, f"the epoch that starts at step {near} steps the loss down", near, by="epoch-staircase")
        out.append(f)
    return out


def _megabatch_marks(facts: Facts, period: float) -> np.ndarray:
    """Where each megabatch starts when only the loss shows them: every ``period`` steps from each
    epoch's first step (HF draws a new set of megabatches every epoch), else from the first step."""
    if facts.steps.size == 0:
        return np.zeros(0, dtype=np.int64)
    end = int(facts.steps[-1])
    starts = [int(s) for s in facts.epochs.starts] if facts.epochs is not None else [int(facts.steps[0])]
    marks: list[float] = []
    for a, b in zip(starts, [*starts[1:], end + 1], strict=True):
        marks.extend(np.arange(a, b, period))
    return np.unique(np.round(marks).astype(np.int64))


#: A period within this many cycles per epoch of a whole number is a harmonic of the epoch.
HARMONIC_SLACK = 0.25


def _fixed_order_harmonics(findings: list[Finding], facts: Facts) -> list[Finding]:
    """Batches fed in the same order every epoch make the whole loss repeat with the epoch: a loss
    period at a harmonic of it (spe/k) is that order, not a second problem."""
    fo, same = facts.fixed_order, facts.same_order
    fixed = (fo is not None and fo.fixed) or (same is not None and same >= 0.9)
    if not fixed or facts.epochs is None or not facts.epochs.steps_per_epoch:
        return findings
    spe = facts.epochs.steps_per_epoch
    out = []
    for f in findings:
        period = _open_period(f)
        if period is not None and period > 0:
            cycles = spe / period
            if round(cycles) >= 1 and abs(cycles - round(cycles)) <= HARMONIC_SLACK:
                f = _explain(
                    f,
                    f"its period of {period:.1f} steps is 1/{round(cycles)} of the epoch ({spe} steps), "
                    "over which the same batches come back in the same order",
                    None,
                    by="static-batching",
                )
        out.append(f)
    return out


def _open_period(f: Finding) -> float | None:
    """The period of a period finding (LD103, LD201) no cause has explained yet, else None."""
    period = f.evidence.get("period") or f.evidence.get("spike_period")
    if f.code in _PERIOD_CODES and "explained_by" not in f.evidence and isinstance(period, int | float):
        return float(period)
    return None


def _explain_periods(
    findings: list[Finding], length: float, tol: float, why: Callable[[float], str], by: str
) -> list[Finding]:
    """Each open period finding within ``tol`` of ``length`` (a cycle a cause makes) explained by
    ``by``, with ``why(period)`` as the reason."""
    out = []
    for f in findings:
        period = _open_period(f)
        if period is not None and abs(period / length - 1) <= tol:
            f = _explain(f, why(period), None, by=by)
        out.append(f)
    return out


def _staircase_period(findings: list[Finding], facts: Facts, tol: float) -> list[Finding]:
    """Under an epoch staircase (memorisation across epochs: the loss steps down at every boundary),
    a loss period of one epoch is the staircase itself, not a data-order warning."""
    if facts.shape is None or not facts.shape.staircase or facts.epochs is None or not facts.epochs.steps_per_epoch:
        return findings
    spe = facts.epochs.steps_per_epoch
    return _explain_periods(
        findings,
        spe,
        tol,
        lambda period: (
            f"its period of {period:.0f} steps is the epoch ({spe} steps), where the loss steps "
            "down as the model meets the same examples again"
        ),
        "epoch-staircase",
    )


def lr_cycle_of(facts: Facts) -> float | None:
    """The cycle of the lr the loss follows (the ``cyclic_lr`` cause), in steps, if known."""
    cause = next((c for c in facts.causes if c.key == "cyclic_lr"), None)
    cycle = cause.evidence.get("lr_cycle_steps") if cause is not None else None
    return float(cycle) if isinstance(cycle, int | float) and cycle > 0 else None


def _cyclic_lr_period(findings: list[Finding], facts: Facts, tol: float) -> list[Finding]:
    """A loss period at the cycle of an lr the loss follows is the schedule's, not a data-order
    problem (one rule whatever the cycle: an epoch-long SGDR restart included)."""
    cycle = lr_cycle_of(facts)
    if cycle is None:
        return findings
    return _explain_periods(
        findings,
        cycle,
        tol,
        lambda period: (
            f"its period of {period:.0f} steps is the lr's cycle ({cycle:.0f} steps), which the loss follows"
        ),
        "cyclic-lr",
    )


def attribute(
    findings: Sequence[Finding],
    verdict: Verdict,
    facts: Facts,
    *,
    resume_steps: Sequence[int] = (),
    tolerance: float = 0.05,
    period_tolerance: float = EPOCH_PERIOD_TOLERANCE,
) -> list[Finding]:
    """Return the detectors' findings with those explained by a resume or a sorted verdict lowered
    to info.

    A step finding that starts at a resume, or within two logged rows after it, is explained by the
    resume. Under a sorted verdict, a step finding is explained when it starts within
    ``max(2, tolerance × spacing)`` steps of a length reset or epoch boundary; a sustained rise or
    drop when it stays between two resets (the within-epoch drift); and a period finding when its
    period is within ``period_tolerance`` of the reset spacing or the epoch length (epochs jitter
    under token-budget batching).
    """
    resumes = np.asarray(sorted(resume_steps), dtype=np.int64)
    row = float(np.median(np.diff(facts.steps))) if facts.steps.size > 1 else 1.0
    findings = [
        f
        if (at := _after_resume(f, resumes, 2 * row)) is None
        else _explain(f, f"the run resumed at step {at}", at, by="resumed-run")
        for f in findings
    ]
    findings = _length_divergence(findings, verdict, facts)
    findings = _staircase_drops(findings, facts, row)
    findings = _staircase_period(findings, facts, period_tolerance)
    if verdict.batching not in ("sorted", "grouped", "static"):  # a batching verdict names its own cause
        findings = _cyclic_lr_period(findings, facts, period_tolerance)
    if verdict.batching == "static":
        return _fixed_order_harmonics(findings, facts)
    # length order within windows seen in the first epoch only (grouped.windows_undecided): its
    # resets explain the same symptoms, whichever of grouped or fixed windows the next epoch shows
    windows_seen = "reset_inside_epoch" in verdict.evidence
    if verdict.batching not in ("sorted", "grouped") and not windows_seen:
        return findings
    marks, spacing = _boundaries(facts), _spacing(facts)
    tol = max(2.0, tolerance * spacing) if spacing else 2.0
    periods = [p for p in (spacing, facts.epochs.steps_per_epoch if facts.epochs else None) if p]
    by = "batching-undecidable" if windows_seen else f"{verdict.batching}-batching"
    mega = verdict.evidence.get("megabatch_period")
    at_what = "batch length resets at step"
    if verdict.batching == "grouped" and isinstance(mega, int | float):
        periods.append(float(mega))  # a loss-only grouped verdict: its period explains LD201/LD103
        if facts.order is None:  # no length resets logged: the megabatch boundaries are the marks,
            # so the sawtooth's jumps fold the same way with or without batch statistics
            marks, tol = _megabatch_marks(facts, float(mega)), max(2.0 * row, 0.1 * float(mega))
            at_what = "a length-grouped megabatch starts at step"
    if verdict.batching == "grouped" and facts.epochs is not None and facts.epochs.steps_per_epoch:
        # megabatch windows tile the epoch: a whole number k of them per epoch gives a period of
        # spe/k; k <= 1/(2 x tolerance) keeps neighbouring harmonics further apart than the tolerance
        spe = facts.epochs.steps_per_epoch
        periods += [spe / k for k in range(2, int(1 / (2 * period_tolerance)) + 1)]
    out: list[Finding] = []
    for f in findings:
        if "explained_by" in f.evidence:
            pass
        elif f.code in _STEP_CODES and f.first_step is not None and marks.size:
            nearest = int(marks[np.argmin(np.abs(marks - f.first_step))])
            if abs(nearest - f.first_step) <= tol:
                f = _explain(f, f"{at_what} {nearest}", nearest, by=by)
            elif f.code in _TREND_CODES and (start := _within_segment(f, marks, tol)) is not None:
                f = _explain(f, f"the loss drifts with batch length within the epoch from step {start}", start, by=by)
        elif f.code in _PERIOD_CODES:
            period = f.evidence.get("period") or f.evidence.get("spike_period")
            if isinstance(period, int | float) and any(abs(period / p - 1) <= period_tolerance for p in periods):
                f = _explain(f, f"its period of {period:.0f} steps is the length-sort cycle", None, by=by)
        out.append(f)
    return out
