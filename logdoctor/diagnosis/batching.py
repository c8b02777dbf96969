"""The batching diagnosis: the facts and findings of a run, through the rule table, into one Verdict.

The rules and their order live in rules.py; this module builds their thresholds from the
configuration, gathers the facts once, and adds the findings, artifacts and attribution.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

from logdoctor.detectors.base import NO_BATCH_STATS, UNUSABLE_LENGTHS
from logdoctor.diagnosis import grouped, rules
from logdoctor.diagnosis.attribution import attribute
from logdoctor.diagnosis.batchfindings import artifacts_for, findings_for
from logdoctor.diagnosis.facts import gather
from logdoctor.diagnosis.prescription import prescribe
from logdoctor.diagnosis.thresholds import DEFAULT, Thresholds
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
    #: the name of the rule (rules.RULES) that gave the verdict
    rule: str = ""
    #: why the batch order could not be read from batch statistics ("" when it was): the verdict
    #: then rests on the loss alone (detectors.base reasons)
    skipped: str = ""


class BatchingDiagnosis:
    """Decide sorted / grouped / static / healthy / not_batching / inconclusive, with confidence.

    Args (the ``[batching]`` options, each a field of ``Thresholds``):
        min_lag1: least lag-1 rank autocorrelation of batch length for sorted order.
        min_monotone: least share of step-to-step length changes in one direction for sorted order.
        min_excess: least recurrence excess over chance (share of the static expectation).
        max_p: largest binomial p-value of the recurrences for static.
        min_spread: least relative IQR of batch length for its order to be informative.
    """

    name = "batching"
    #: every keyword of ``__init__`` with its type and bounds (checked where configured)
    options: ClassVar[tuple[Option, ...]] = (
        Option("min_lag1", float, -1, 1),
        Option("min_monotone", float, 0, 1),
        at_least("min_excess", 0),
        fraction("max_p"),
        at_least("min_spread", 0),
    )

    def __init__(
        self,
        *,
        min_lag1: float = DEFAULT.min_lag1,
        min_monotone: float = DEFAULT.min_monotone,
        min_excess: float = DEFAULT.min_excess,
        max_p: float = DEFAULT.max_p,
        min_spread: float = DEFAULT.min_spread,
    ) -> None:
        self.thresholds = Thresholds(
            min_lag1=min_lag1, min_monotone=min_monotone, min_excess=min_excess, max_p=max_p, min_spread=min_spread
        )

    def case(self, run: Run, findings: Sequence[Finding]) -> rules.Case:
        """What the rules read about ``run``, computed once."""
        t = self.thresholds
        facts = gather(run, findings, t)
        windows = grouped.stats_windows(run, facts, t)
        facts = replace(facts, order_hidden=grouped.hidden(windows))
        # the loss period is tested with or without batch statistics: they may only add evidence
        match = grouped.loss_match(facts)
        # a loss period the megabatch explains: the lr is logged, does not cycle, and nothing that
        # reshapes the loss over time (NaN, resume, running average) is in the way
        fits = match if match is not None and facts.has_lr and not facts.lr_cyclic and grouped.explains(facts) else None
        sorted_order = rules.is_sorted(facts, t)
        reset_at = grouped.reset_inside_first_epoch(facts, facts.order) if sorted_order and facts.order else None
        return rules.Case(facts, t, windows, match, fits, t.static(facts.rec), sorted_order, reset_at)

    def diagnose(self, run: Run, findings: Sequence[Finding]) -> Diagnosis:
        """Return the verdict for a run given the detectors' findings."""
        case = self.case(run, findings)
        rule, verdict = rules.decide(case)
        facts = case.facts
        verdict = prescribe(run, verdict, facts.token_budget)
        return Diagnosis(
            verdict,
            findings_for(verdict, facts),
            artifacts_for(facts),
            attributed=tuple(attribute(findings, verdict, facts, resume_steps=run.meta.resume_steps)),
            rule=rule.name,
            skipped="" if facts.x is not None else UNUSABLE_LENGTHS if facts.batch_columns else NO_BATCH_STATS,
        )
