"""Eval rows whose own counter counts evaluations, not steps, take their training row's step."""

from __future__ import annotations

import polars as pl

from logdoctor.structure.evals import place_evals


def _train(n: int, every: int) -> pl.DataFrame:
    """Training rows at steps every, 2*every, ... on lines 1, 3, 5, ... (an eval line after each)."""
    return pl.DataFrame({"step": [every * (i + 1) for i in range(n)], "line_no": [2 * i + 1 for i in range(n)]})


def test_validation_counter_is_not_a_step() -> None:
    """``validation: iter K`` after training step 1000*K: K counts validations."""
    evals = pl.DataFrame({"step": [1, 2, 3], "line_no": [2, 4, 6], "dev_ppl": [9.0, 8.0, 7.5]})
    placed = place_evals(evals, _train(3, 1000))
    assert placed["step"].to_list() == [1000, 2000, 3000]


def test_evals_on_the_training_axis_keep_their_steps() -> None:
    """Must not: an eval at its own step (HF ``eval_loss`` at step N, or just behind the row
    before it) keeps it, even when one of them lags."""
    evals = pl.DataFrame({"step": [1000, 1950, 3000, 2], "line_no": [2, 4, 6, 8], "eval_loss": [2.0, 1.9, 1.8, 1.7]})
    placed = place_evals(evals, _train(4, 1000))
    assert placed["step"].to_list() == [1000, 1950, 3000, 2]
