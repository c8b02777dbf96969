"""The batching diagnosis: combine findings and per-batch statistics into one Verdict.

Order of reasoning: batch statistics first (sorted order, then static composition), then the other
explanations for a bad-looking loss (NaN, divergence, resume, instability, bad batches, cyclic lr,
running-average logging, epoch staircase), then healthy; inconclusive when the log cannot decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

from logdoctor.diagnosis import grouped, lossonly
from logdoctor.diagnosis import verdicts as vt
from logdoctor.diagnosis.attribution import attribute
from logdoctor.diagnosis.batchfindings import artifacts_for, findings_for
from logdoctor.diagnosis.facts import Facts, gather
from logdoctor.diagnosis.lengthstats import tracks as tracks_length
from logdoctor.diagnosis.megabatch import Match
from logdoctor.diagnosis.prescription import prescribe
from logdoctor.model import Finding, Run, Verdict
from logdoctor.options import Option, at_least, fraction


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """The verdict, plus any findings and artifacts the diagnosis itself adds (LD5xx, LD202-204)."""

    verdict: Verdict
    findings: tuple[Finding, ...] = ()
    artifacts: dict[str, object] = field(default_factory=dict)
    #: the detectors' findings, with those the verdict explains lowered to info (see attribution)
    attributed: tuple[Finding, ...] = ()


class BatchingDiagnosis:
    """Decide sorted / grouped / static / healthy / not_batching / inconclusive, with confidence.

    Args:
        min_lag1: least lag-1 rank autocorrelation of batch length for sorted order.
        min_monotone: least share of step-to-step length changes in one direction for sorted order.
        min_excess: least recurrence excess over chance (share of the static expectation).
        max_p: largest binomial p-value of the recurrences for static.
        min_spread: least relative IQR of batch length for its order to be informative.
    """

    name = "batching"
    #: every keyword of ``__init__`` with its type and bounds (checked where configured)
    options: ClassVar[tuple[Option, ...]] = (
        Option("min_lag1", float, -1, 1), Option("min_monotone", float, 0, 1), at_least("min_excess", 0),
        fraction("max_p"), at_least("min_spread", 0),
    )

    def __init__(
        self,
        *,
        min_lag1: float = 0.5,
        min_monotone: float = 0.7,
        min_excess: float = 0.5,
        max_p: float = 1e-6,
        min_spread: float = 0.05,
    ) -> None:
        self.min_lag1 = min_lag1
        self.min_monotone = min_monotone
        self.min_excess = min_excess
        self.max_p = max_p
        self.min_spread = min_spread

    def is_sorted(self, facts: Facts) -> bool:
        """Batch length is strongly autocorrelated and mostly moves one way along the steps, and
        either resets at an epoch or window boundary or drives the loss. A single ramp with neither
        (e.g. a length curriculum, or a toy log whose lengths just count up) is not enough.
        """
        o, tracks = facts.order, tracks_length(facts.loss_len)
        return (
            o is not None
            and o.n >= 30
            and o.lag1 >= self.min_lag1
            and o.monotone_frac >= self.min_monotone
            and (len(o.resets) >= 1 or tracks)
        )

    def is_static(self, facts: Facts) -> bool:
        """Batches recur across epochs far beyond chance."""
        r = facts.rec
        return (
            r is not None and r.decidable and r.excess >= self.min_excess and r.p_value < self.max_p
        )

    def loss_only_sorted(self, facts: Facts) -> bool:
        """No batch statistics, but an epoch sawtooth the lr cannot explain."""
        return (
            facts.order is None
            and facts.shape is not None
            and facts.shape.sawtooth
            and facts.has_lr
            and not facts.lr_cyclic
        )

    @staticmethod
    def sawtooth_explains(facts: Facts) -> bool:
        """An epoch sawtooth also explains a "divergence" (the climb within each epoch) or loss
        spikes; it does not explain NaN, a resume, instability or a running average.
        """
        return all(c.key in ("divergence", "bad_batches") for c in facts.causes)

    @staticmethod
    def _no_grouping_reason(facts: Facts, match: object) -> str:
        if match is not None and not facts.has_lr:
            return (
                "; the loss repeats at the length-grouped megabatch period, but the lr is not logged, "
                "so a schedule with that period cannot be ruled out"
            )
        return grouped.averaged_reason(facts)

    @staticmethod
    def _megabatch_over_epoch(facts: Facts, match: Match) -> bool:
        """A megabatch period that explains more of the loss than the epoch's phase does.

        HF's sampler puts its longest megabatch first, so a grouped run jumps at each epoch start
        too; but there the megabatch phase explains most of the loss (real runs: r² 0.78-0.81 vs
        0.29-0.31 for the epoch phase), while in a whole-epoch sort the epoch phase does (0.60 vs
        0.21 for the sawtooth's 50-step harmonic).
        """
        s = facts.shape
        return match.r2 is not None and s is not None and match.r2 > s.phase_r2

    def diagnose(self, run: Run, findings: Sequence[Finding]) -> Diagnosis:
        """Return the verdict for a run given the detectors' findings."""
        facts = gather(run, findings, self.min_spread, (self.min_lag1, self.min_monotone))
        o, r, s = facts.order, facts.rec, facts.shape
        windows = grouped.stats_windows(run, facts)
        facts = replace(facts, order_hidden=grouped.hidden(windows))
        # the loss period is tested with or without batch statistics: they may only add evidence
        match = grouped.loss_match(facts)
        # a loss period the megabatch explains: the lr is logged, does not cycle, and nothing that
        # reshapes the loss over time (NaN, resume, running average) is in the way
        fits = match if match is not None and facts.has_lr and not facts.lr_cyclic and grouped.explains(facts) else None
        static = r is not None and self.is_static(facts)
        if windows.found is not None and not static:
            verdict = grouped.from_windows(facts, windows.found, fits)
        elif o is not None and self.is_sorted(facts):
            if (at := grouped.reset_inside_first_epoch(facts, o)) is not None and not static:
                verdict = grouped.windows_undecided(facts, o, at)
            elif grouped.windowed(facts, o, static):
                verdict = grouped.from_stats(facts, o, self.min_lag1, self.min_monotone, windows.hf_steps)
            else:
                verdict = vt.sorted_verdict(facts, o, self.min_lag1, self.min_monotone)
        elif r is not None and static:
            verdict = vt.static_verdict(facts, r, self.min_excess)
        elif fits is not None and self._megabatch_over_epoch(facts, fits):
            verdict = grouped.from_loss(facts, fits)
        elif s is not None and self.loss_only_sorted(facts) and self.sawtooth_explains(facts):
            verdict = vt.loss_only_sorted_verdict(facts, s)
        elif fits is not None:
            verdict = grouped.from_loss(facts, fits)
        elif lossonly.fixed_order_decides(facts):
            verdict = lossonly.fixed_order_verdict(facts)
        elif lossonly.cannot_clear(facts):  # spikes may be long batches: the loss alone cannot clear batching
            verdict = lossonly.spikes_verdict(facts, megabatch_tested=match is None)
        elif facts.causes:
            verdict = vt.not_batching_verdict(facts, self.min_lag1)
        elif o is None and r is None:
            reason = self._no_grouping_reason(facts, match)
            ruled = lossonly.ruled_out_text(lossonly.ruled_out(facts, match is None and not reason))
            verdict = vt.undecidable_verdict(facts, reason + ruled)
        elif facts.order_hidden and r is not None and r.decidable:
            verdict = grouped.hidden_verdict(facts, r)
        elif r is None or not r.decidable or r.excess >= self.min_excess:
            # recurrence halfway to static but not significant: neither static nor healthy
            verdict = vt.static_undecidable_verdict(facts, self.min_lag1)
        else:
            verdict = vt.healthy_verdict(facts, r, self.min_lag1, self.min_excess)
        if fits is not None and verdict.batching == "grouped":  # statistics may only add evidence
            verdict = replace(verdict, confidence=max(verdict.confidence or 0.0, grouped.loss_confidence(facts, fits)))
        verdict = prescribe(run, verdict, facts.token_budget)
        return Diagnosis(
            verdict,
            findings_for(verdict, facts),
            artifacts_for(facts),
            attributed=tuple(attribute(findings, verdict, facts, resume_steps=run.meta.resume_steps)),
        )
