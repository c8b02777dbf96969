"""Turn a BucketPlan into rows and a JSON document (rich lives in the console module)."""

from __future__ import annotations

import json
import math
from typing import Any

from logdoctor import sanitize
from logdoctor.bucketing.optimize import OBJECTIVE_TEXT
from logdoctor.bucketing.plan import STRATEGIES, BucketPlan

FORMAT_VERSION = 1  # 1: first version
LABELS = {
    "random": "(a) random",
    "sorted": "(b) sorted",
    "bucketed": "(c) bucketed",
}


def _num(x: float) -> float | None:
    return round(x, 6) if math.isfinite(x) else None


def strategy_rows(plan: BucketPlan) -> list[tuple[str, str, str, str, str]]:
    """Strategy, padding efficiency, batches per epoch, tokens per real token, throughput vs (b)."""
    rows = []
    for name in STRATEGIES:
        s = plan.strategies[name]
        rows.append(
            (
                LABELS[name],
                f"{s.padding_efficiency:.1%}",
                f"{s.batches_per_epoch:,.0f}",
                f"{s.tokens_per_real_token:.3f}",
                f"{plan.relative_throughput(name, 'sorted'):.0%}",
            )
        )
    return rows


def bucket_rows(plan: BucketPlan) -> list[tuple[str, ...]]:
    """One row per bucket: range, sequences, tokens, batches/epoch, seqs/batch, compositions."""
    return [
        (
            f"({b.lower}, {b.upper}]",
            f"{b.sequences:,}",
            f"{b.tokens:,}",
            f"{b.batches_per_epoch:,.1f}",
            f"{b.seqs_per_batch:.1f}",
            f"10^{b.log10_compositions:,.0f}",
            "REPEATS" if b.repeats else "",
        )
        for b in plan.buckets
    ]


def to_dict(plan: BucketPlan) -> dict[str, Any]:
    """The versioned JSON document of a plan."""
    st = plan.strategies
    return {
        "format_version": FORMAT_VERSION,
        "token_budget": plan.token_budget,
        "max_seq_len": plan.max_seq_len,
        "sequences": plan.sequences,
        "real_tokens": plan.real_tokens,
        "truncated": plan.truncated,
        "objective": {
            "name": plan.objective,
            "description": OBJECTIVE_TEXT,
            "value": plan.objective_value,
            "model_padding_efficiency": _num(plan.model_efficiency),
        },
        "boundaries": list(plan.boundaries),
        "padding_efficiency": {n: _num(st[n].padding_efficiency) for n in STRATEGIES},
        "batches_per_epoch": {n: _num(st[n].batches_per_epoch) for n in STRATEGIES},
        "tokens_per_real_token": {n: _num(st[n].tokens_per_real_token) for n in STRATEGIES},
        "relative_throughput": {
            "bucketed_vs_sorted": _num(plan.relative_throughput("bucketed", "sorted")),
            "bucketed_vs_random": _num(plan.relative_throughput("bucketed", "random")),
            "bucketed_vs_sorted_per_batch_cost": _num(
                st["sorted"].batches_per_epoch / st["bucketed"].batches_per_epoch
            ),
        },
        "efficiency_by_k": [
            {"k": k, "model_padding_efficiency": _num(e)} for k, e in enumerate(plan.efficiency_by_k, start=1)
        ],
        "buckets": [
            {
                "lower": b.lower,
                "upper": b.upper,
                "sequences": b.sequences,
                "tokens": b.tokens,
                "batches_per_epoch": _num(b.batches_per_epoch),
                "seqs_per_batch": _num(b.seqs_per_batch),
                "log10_compositions": _num(b.log10_compositions),
                "repeats": b.repeats,
            }
            for b in plan.buckets
        ],
        "warnings": list(plan.warnings),
        "simulation": {"shuffles": plan.shuffles, "seed": plan.seed},
    }


def render_json(plan: BucketPlan) -> str:
    """``to_dict`` as indented JSON text (credentials in what it quotes redacted)."""
    return json.dumps(sanitize.clean(to_dict(plan), sanitize.redact), indent=2) + "\n"
