"""The batching verdict as one ordered table of rules: the first whose predicate holds gives the verdict.

Order of reasoning: batch statistics first (HF's windows, sorted order, static composition), then
the loss alone (a megabatch period, an epoch sawtooth, a fixed order), then the other explanations
for a bad-looking loss (spikes the loss alone cannot clear, NaN, divergence, resume, instability,
cyclic lr, running average, epoch staircase), then what the log cannot decide, then healthy.
Each rule reads the facts (``facts.gather``), the detectors' findings through them, and the one
``Thresholds`` object; the verdict builders say it in words (verdicts.py, grouped.py, lossonly.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from logdoctor.diagnosis import grouped, lossonly
from logdoctor.diagnosis import megabatch as mb
from logdoctor.diagnosis import verdicts as vt
from logdoctor.diagnosis import windows as win
from logdoctor.diagnosis.facts import MIN_LENGTH_STEPS, Facts
from logdoctor.diagnosis.lengthstats import tracks
from logdoctor.diagnosis.thresholds import Thresholds
from logdoctor.model import Verdict

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Case:
    """What the rules read about one run, each computed once before any rule runs.

    Attributes:
        facts: the run's evidence and the detectors' findings as causes (``facts.gather``).
        t: the verdict's thresholds, as configured.
        windows: HF's megabatch window for this run's sizes, tested on the batch statistics.
        match: a loss period at a length-grouped megabatch size (LD201's, or a candidate tested).
        fits: ``match`` when the megabatch explains it (the lr is logged, does not cycle, and
            nothing that reshapes the loss over time is in the way), else None.
        static: batches recur across epochs far beyond chance.
        sorted: batch length is sorted along the steps (``is_sorted``).
        reset_at: a length reset inside the first epoch of a log not past it (else None).
    """

    facts: Facts
    t: Thresholds
    windows: win.Search
    match: mb.Match | None
    fits: mb.Match | None
    static: bool
    sorted: bool
    reset_at: int | None


def is_sorted(f: Facts, t: Thresholds) -> bool:
    """Batch length is strongly autocorrelated and mostly moves one way along the steps, and
    either resets at an epoch or window boundary or drives the loss. A single ramp with neither
    (e.g. a length curriculum, or a toy log whose lengths just count up) is not enough."""
    o = f.order
    return o is not None and o.n >= MIN_LENGTH_STEPS and t.ordered(o) and (len(o.resets) >= 1 or tracks(f.loss_len))


def _megabatch_over_epoch(c: Case) -> bool:
    """A megabatch period that explains more of the loss than the epoch's phase does.

    HF's sampler puts its longest megabatch first, so a grouped run jumps at each epoch start
    too; but there the megabatch phase explains most of the loss (real runs: r² 0.78-0.81 vs
    0.29-0.31 for the epoch phase), while in a whole-epoch sort the epoch phase does (0.60 vs
    0.21 for the sawtooth's 50-step harmonic).
    """
    s = c.facts.shape
    return c.fits is not None and c.fits.r2 is not None and s is not None and c.fits.r2 > s.phase_r2


def _epoch_sawtooth(c: Case) -> bool:
    """No batch statistics, an epoch sawtooth the lr cannot explain (logged, not cyclic), and no
    cause it does not explain: it explains a "divergence" (the climb within each epoch) and loss
    spikes, not NaN, a resume, instability or a running average."""
    f = c.facts
    return (
        f.order is None
        and f.shape is not None
        and f.shape.sawtooth
        and f.has_lr
        and not f.lr_cyclic
        and all(x.key in ("divergence", "bad_batches") for x in f.causes)
    )


def _recurrence_open(c: Case) -> bool:
    """Static composition could not be checked (no epochs, one epoch, too few batches), or the
    batches recur halfway to static without significance: neither static nor healthy."""
    r = c.facts.rec
    return r is None or not r.decidable or r.excess >= c.t.min_excess


def _need(x: T | None) -> T:
    """``x``, which the rule's predicate has checked is there."""
    if x is None:
        raise ValueError("a rule's verdict ran without what its predicate checked")
    return x


def _undecidable(c: Case) -> Verdict:
    """Loss only: what the log cannot decide, why, and what the loss itself ruled out."""
    f = c.facts
    if c.match is not None and not f.has_lr:
        reason = (
            "; the loss repeats at the length-grouped megabatch period, but the lr is not logged, "
            "so a schedule with that period cannot be ruled out"
        )
    else:
        reason = grouped.averaged_reason(f)
    ruled = lossonly.ruled_out_text(lossonly.ruled_out(f, c.match is None and not reason))
    return vt.undecidable_verdict(f, reason + ruled)


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of the table: its name, when it applies, the label it gives and the verdict that says
    so, and the evidence it rests on, in words."""

    name: str
    gives: str
    applies: Callable[[Case], bool]
    verdict: Callable[[Case], Verdict]
    evidence: str


#: The rules in the order they are tried; the last always applies.
RULES: tuple[Rule, ...] = (
    Rule(
        "grouped-windows",
        "grouped",
        lambda c: c.windows.found is not None and not c.static,
        lambda c: grouped.from_windows(c.facts, _need(c.windows.found), c.fits),
        "sorted windows of HF's size for this run (or of the reset spacing), whatever the lag-1 correlation",
    ),
    Rule(
        "windows-first-epoch",
        "inconclusive",
        lambda c: c.sorted and c.reset_at is not None and not c.static,
        lambda c: grouped.windows_undecided(c.facts, _need(c.facts.order), _need(c.reset_at)),
        "sorted order that resets inside the first epoch, before a second epoch shows recomposition",
    ),
    Rule(
        "grouped-resets",
        "grouped",
        lambda c: c.sorted and grouped.windowed(c.facts, _need(c.facts.order), c.static, c.t),
        lambda c: grouped.from_stats(c.facts, _need(c.facts.order), c.t, c.windows.hf_steps),
        "sorted order within windows shorter than the epoch, recomposed every epoch",
    ),
    Rule(
        "sorted",
        "sorted",
        lambda c: c.sorted,
        lambda c: vt.sorted_verdict(c.facts, _need(c.facts.order), c.t),
        "lag-1 length correlation and one-way share of changes, with resets or a loss that tracks length",
    ),
    Rule(
        "static",
        "static",
        lambda c: c.static,
        lambda c: vt.static_verdict(c.facts, _need(c.facts.rec), c.t),
        "batches recur across epochs beyond chance (fingerprints, or the signature occupancy test)",
    ),
    Rule(
        "grouped-loss-over-epoch",
        "grouped",
        _megabatch_over_epoch,
        lambda c: grouped.from_loss(c.facts, _need(c.fits)),
        "a megabatch period in the loss whose phase explains more than the epoch's",
    ),
    Rule(
        "sorted-loss",
        "sorted",
        _epoch_sawtooth,
        lambda c: vt.loss_only_sorted_verdict(c.facts, _need(c.facts.shape)),
        "an epoch sawtooth (LD202) the lr does not explain, no batch statistics",
    ),
    Rule(
        "grouped-loss",
        "grouped",
        lambda c: c.fits is not None,
        lambda c: grouped.from_loss(c.facts, _need(c.fits)),
        "a loss period at a length-grouped megabatch size that the lr does not explain",
    ),
    Rule(
        "fixed-order-loss",
        "static",
        lambda c: lossonly.fixed_order_decides(c.facts),
        lambda c: lossonly.fixed_order_verdict(c.facts),
        "the loss at the same position in consecutive epochs correlates beyond its shifted null",
    ),
    Rule(
        "spikes-without-lengths",
        "inconclusive",
        lambda c: lossonly.cannot_clear(c.facts),
        lambda c: lossonly.spikes_verdict(c.facts, megabatch_tested=c.match is None),
        "loss spikes (or a resume beside a loss period) and no batch length to tell a bad batch from a long one",
    ),
    Rule(
        "not-batching",
        "not_batching",
        lambda c: bool(c.facts.causes),
        lambda c: vt.not_batching_verdict(c.facts, c.t),
        "a detector's finding or a checked cause explains the loss (NaN, divergence, resume, ...)",
    ),
    Rule(
        "no-batch-statistics",
        "inconclusive",
        lambda c: c.facts.order is None and c.facts.rec is None,
        _undecidable,
        "neither batch order nor recurrence can be read from the log",
    ),
    Rule(
        "order-hidden",
        "inconclusive",
        lambda c: bool(c.facts.order_hidden) and c.facts.rec is not None and c.facts.rec.decidable,
        lambda c: grouped.hidden_verdict(c.facts, _need(c.facts.rec)),
        "recomposed every epoch, but the logging interval hides the order inside HF's window",
    ),
    Rule(
        "recurrence-undecided",
        "inconclusive",
        _recurrence_open,
        lambda c: vt.static_undecidable_verdict(c.facts, c.t),
        "recomposition across epochs cannot be checked, or recurrence is halfway to static without significance",
    ),
    Rule(
        "healthy",
        "healthy",
        lambda c: True,
        lambda c: vt.healthy_verdict(c.facts, _need(c.facts.rec), c.t),
        "random order, recomposed every epoch, nothing else wrong",
    ),
)


def decide(case: Case) -> tuple[Rule, Verdict]:
    """The first rule that applies to ``case``, and its verdict; a grouped verdict's confidence is
    never below what the loss period gives by itself (statistics may only add evidence)."""
    rule = next(r for r in RULES if r.applies(case))
    verdict = rule.verdict(case)
    if case.fits is not None and verdict.batching == "grouped":
        conf = max(verdict.confidence or 0.0, grouped.loss_confidence(case.facts, case.fits))
        verdict = replace(verdict, confidence=conf)
    return rule, verdict
