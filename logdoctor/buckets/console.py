"""The bucket plan as rich tables for the terminal (the only module here that uses rich)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table

from logdoctor import sanitize
from logdoctor.bucketing.optimize import OBJECTIVE_TEXT
from logdoctor.bucketing.plan import BucketPlan
from logdoctor.buckets.report import bucket_rows, strategy_rows


def render_text(plan: BucketPlan, *, width: int = 100, color: bool = False) -> str:
    """Summary, strategy comparison, per-bucket mixing table and warnings as terminal text."""
    buf = io.StringIO()
    con = Console(file=buf, width=width, force_terminal=color, color_system="auto" if color else None, highlight=False)
    con.print(
        f"{plan.sequences:,} sequences, {plan.real_tokens:,} tokens; token budget "
        f"{plan.token_budget}, max length {plan.max_seq_len}"
    )
    con.print(
        f"Recommended boundaries ({len(plan.boundaries)} buckets, upper bounds inclusive): "
        f"{', '.join(str(b) for b in plan.boundaries)}"
    )
    con.print(
        f"Objective {plan.objective}: {OBJECTIVE_TEXT}; value {plan.objective_value:,} "
        f"padding tokens (efficiency ≥ {plan.model_efficiency:.1%})"
    )
    strat = Table(title="Token-budget batching, one epoch", title_justify="left")
    for col in ("strategy", "padding efficiency", "batches/epoch", "tokens per real token", "throughput vs (b)"):
        strat.add_column(col, justify="left" if col == "strategy" else "right")
    for row in strategy_rows(plan):
        strat.add_row(*row)
    con.print(strat)
    mix = Table(title="How much the bucketed shuffle still mixes", title_justify="left")
    for col in ("bucket", "sequences", "tokens", "batches/epoch", "seqs/batch", "compositions", ""):
        mix.add_column(col, justify="left" if col == "bucket" else "right")
    for brow in bucket_rows(plan):
        mix.add_row(*brow, style="bold red" if brow[-1] else None)
    con.print(mix)
    con.print(f"In short: {plan.summary()}.")
    for w in plan.warnings:
        con.print(sanitize.terminal(f"warning: {w}"), style="yellow", markup=False)  # may quote the input
    return buf.getvalue()
