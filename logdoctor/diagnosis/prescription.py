"""Price the fix for a sorted or static verdict from the batch lengths the log itself saw (or, for a
probe of the sampler, from the samples' own lengths)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from logdoctor.diagnosis.lengthstats import column
from logdoctor.errors import LogdoctorError
from logdoctor.model import LEN_MAX, LEN_MEAN, LEN_MIN, SEQS, Run, Verdict

if TYPE_CHECKING:
    from logdoctor.bucketing.plan import BucketPlan

#: At most this many logged batches feed the estimate: one epoch, or its first 4,000 batches
#: (about 0.6 s), enough for the length distribution and cheap beside a 1M-step analysis.
MAX_BATCHES = 4_000


def _column(run: Run, name: str, rows: int) -> np.ndarray | None:
    values = column(run, name)
    return None if values is None else values[:rows]


def prescribe(run: Run, verdict: Verdict, token_budget: int | None) -> Verdict:
    """Add a bucket-plan estimate to a sorted/static/grouped verdict's hint and evidence.

    The lengths are reconstructed from the logged per-batch statistics of the first epoch (see
    ``buckets.estimate``); the estimate is what ``logdoctor buckets`` would recommend for them.
    Other verdicts, and logs without ``len_mean`` and ``seqs``, are returned unchanged.
    """
    if verdict.batching not in ("sorted", "static", "grouped") or not (run.has(LEN_MEAN) and run.has(SEQS)):
        return verdict
    from logdoctor.bucketing.estimate import estimate_from_batches

    rows = min(run.meta.steps_per_epoch or MAX_BATCHES, MAX_BATCHES)
    try:
        plan = estimate_from_batches(
            _column(run, LEN_MEAN, rows),  # type: ignore[arg-type]
            _column(run, SEQS, rows),  # type: ignore[arg-type]
            len_min=_column(run, LEN_MIN, rows),
            len_max=_column(run, LEN_MAX, rows),
            token_budget=token_budget,
        )
    except LogdoctorError:
        return verdict
    hint = f"{verdict.hint.rstrip('.')}. {FROM_LOG}: {plan.summary()}."
    return dataclasses.replace(verdict, hint=hint, evidence={**verdict.evidence, **_price(plan)})


#: How a fix priced on a log's batches is introduced in the verdict's hint.
FROM_LOG = "Estimated from the batches in this log"
_PRICE_KEYS = ("fix_buckets", "fix_bucketed_vs_sorted_throughput", "fix_bucketed_vs_random_throughput")


def _price(plan: BucketPlan) -> dict[str, int | float]:
    return {
        "fix_buckets": len(plan.boundaries),
        "fix_bucketed_vs_sorted_throughput": round(plan.relative_throughput("bucketed", "sorted"), 4),
        "fix_bucketed_vs_random_throughput": round(plan.relative_throughput("bucketed", "random"), 4),
    }


def reprice(verdict: Verdict, plan: BucketPlan, samples: int) -> Verdict:
    """A sorted/static/grouped verdict with its fix priced on the samples' own lengths (``plan``, on
    the lengths of the ``samples`` a probe of the sampler drew, or a uniform draw of them) instead of
    lengths rebuilt from batch statistics: the hint's price and ``buckets`` command name the plan's
    token budget; other verdicts unchanged."""
    if verdict.batching not in ("sorted", "static", "grouped"):
        return verdict
    hint = verdict.hint.split(f". {FROM_LOG}:")[0].rstrip(".")
    old = verdict.evidence.get("token_budget_estimate")
    if old:
        hint = hint.replace(f"--token-budget {old}`", f"--token-budget {plan.token_budget}`")
    evidence = {k: v for k, v in verdict.evidence.items() if k not in (*_PRICE_KEYS, "token_budget_estimate")}
    evidence |= {**_price(plan), "fix_sequences": plan.sequences, "fix_token_budget": plan.token_budget}
    what = (
        f"these {samples:,} samples' lengths"
        if plan.sequences >= samples
        else f"the lengths of {plan.sequences:,} of these {samples:,} samples (a uniform draw)"
    )
    hint = f"{hint}. Priced on {what}: {plan.summary()}."
    return dataclasses.replace(verdict, hint=hint, evidence=evidence)
