"""Price the fix for a sorted or static verdict from the batch lengths the log itself saw."""

from __future__ import annotations

import dataclasses

import numpy as np

from logdoctor.diagnosis.lengthstats import column
from logdoctor.errors import LogdoctorError
from logdoctor.model import LEN_MAX, LEN_MEAN, LEN_MIN, SEQS, Run, Verdict

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
    evidence = {
        **verdict.evidence,
        "fix_buckets": len(plan.boundaries),
        "fix_bucketed_vs_sorted_throughput": round(plan.relative_throughput("bucketed", "sorted"), 4),
        "fix_bucketed_vs_random_throughput": round(plan.relative_throughput("bucketed", "random"), 4),
    }
    hint = f"{verdict.hint.rstrip('.')}. Estimated from the batches in this log: {plan.summary()}."
    return dataclasses.replace(verdict, hint=hint, evidence=evidence)
