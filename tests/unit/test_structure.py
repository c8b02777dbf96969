"""Run-structure rules: duplicates, resumes vs interleaving, epochs, counters, degenerate data."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.structure.build import build_run, infer_steps_per_epoch
from logdoctor.structure.counters import degenerate_columns, is_cumulative


def _result(steps: list[int], loss: list[float] | None = None, **cols: list) -> ParseResult:
    n = len(steps)
    data = {"step": steps, "loss": loss if loss is not None else [1.0 + 0.01 * i for i in range(n)]}
    data["line_no"] = list(range(1, n + 1))
    data.update(cols)
    return ParseResult(table=pl.DataFrame(data), lines_read=n)


def test_monotonic_run_is_untouched() -> None:
    run = build_run(_result([1, 2, 3, 4]), "x", "jsonl")
    assert run.table["step"].to_list() == [1, 2, 3, 4]
    assert (run.meta.resumes, run.meta.duplicate_steps, run.meta.nonmonotonic_steps) == (0, 0, 0)


def test_resume_later_write_wins_and_discards_retrained_steps() -> None:
    steps = [*range(1, 11), *range(6, 16)]
    loss = [float(s) for s in range(1, 11)] + [100.0 + s for s in range(6, 16)]
    run = build_run(_result(steps, loss), "x", "jsonl")
    assert run.meta.resumes == 1
    assert run.meta.resume_steps == (6,)
    assert run.meta.overwritten_steps == 5
    assert run.table["step"].to_list() == list(range(1, 16))
    assert run.table["loss"].to_list()[:6] == [1.0, 2.0, 3.0, 4.0, 5.0, 106.0]


def test_resume_discards_unrewritten_later_steps_too() -> None:
    # logged 1..10, restarted from 5, logged only up to 7: 8..10 are not on the final trajectory
    run = build_run(_result([*range(1, 11), 5, 6, 7]), "x", "jsonl")
    assert run.table["step"].to_list() == [1, 2, 3, 4, 5, 6, 7]
    assert run.meta.overwritten_steps == 6


def test_two_resumes_are_counted() -> None:
    steps = [*range(1, 21), *range(11, 31), *range(21, 41)]
    run = build_run(_result(steps), "x", "jsonl")
    assert run.meta.resume_steps == (11, 21)
    assert run.meta.overwritten_steps == 20
    assert run.n_steps == 40


def test_adjacent_exact_duplicates_are_not_a_resume() -> None:
    steps = [1, 1, 5, 5, 10, 10]
    loss = [3.0, 3.0, 2.0, 2.0, 1.0, 1.0]
    speed = [0.1, 0.2, 0.1, 0.2, 0.1, 0.2]  # timings differ between the two writes
    run = build_run(_result(steps, loss, speed=speed), "x", "jsonl")
    assert run.meta.duplicate_steps == 3
    assert run.meta.resumes == 0
    assert run.meta.nonmonotonic_steps == 0
    assert run.table["step"].to_list() == [1, 5, 10]


def test_same_step_with_different_values_is_not_a_duplicate() -> None:
    run = build_run(_result([1, 2, 2, 3, 4, 5], [1.0, 2.0, 2.5, 3.0, 4.0, 5.0]), "x", "jsonl")
    assert run.meta.duplicate_steps == 0
    assert run.meta.resumes == 0  # step 2 written twice by consecutive records: the later wins
    assert run.meta.overwritten_steps == 1
    assert run.table.filter(pl.col("step") == 2)["loss"].item() == 2.5


def test_alternating_ranks_are_interleaving_not_resumes() -> None:
    steps = [s for s in range(1, 51) for _ in (0, 1)]
    loss = [v for s in range(1, 51) for v in (float(s), s + 0.5)]
    run = build_run(_result(steps, loss), "x", "jsonl")
    assert run.meta.resumes == 0
    assert run.meta.nonmonotonic_steps == 50
    assert run.table["step"].to_list() == list(range(1, 51))
    assert run.table["loss"][0] == 1.5  # the last write of a step
    assert any("interleaved" in n for n in run.meta.notes)


def test_chunked_writers_with_many_long_jumps_are_interleaving() -> None:
    # two writers flushing 5-record chunks: 39 long backward jumps, far more than resumes can be
    steps: list[int] = []
    for c in range(20):
        steps += list(range(c * 5 + 1, c * 5 + 6)) * 2
    steps = [s + (1000 if i % 2 else 0) for i, s in enumerate(steps)]
    run = build_run(_result(steps), "x", "jsonl")
    assert run.meta.resumes == 0
    assert run.meta.nonmonotonic_steps > 0


def test_restart_marker_without_backward_step_is_a_resume() -> None:
    restart = [1] + [0] * 9 + [1] + [0] * 9  # the first flag is the initial "Training started"
    run = build_run(_result(list(range(1, 21)), restart=restart), "x", "text")
    assert run.meta.resumes == 1
    assert run.meta.resume_steps == (11,)
    assert run.meta.overwritten_steps == 0
    assert "restart" not in run.table.columns


def test_nan_and_inf_losses_are_kept_and_counted() -> None:
    run = build_run(_result([1, 2, 3], [1.0, float("nan"), float("inf")]), "x", "jsonl")
    assert run.n_steps == 3
    assert math.isnan(run.table["loss"][1])
    assert any("2 step(s) have a NaN or infinite loss" in n for n in run.meta.notes)


def test_steps_per_epoch_from_jittery_integer_epoch() -> None:
    bounds = [0, 98, 203, 301, 399, 502]
    epoch = np.searchsorted(bounds, np.arange(1, 500), side="right") - 1
    t = pl.DataFrame({"step": np.arange(1, 500), "epoch": epoch.astype(float)})
    assert infer_steps_per_epoch(t) == 98


def test_steps_per_epoch_from_fractional_epoch() -> None:
    steps = np.arange(10, 1001, 10)
    t = pl.DataFrame({"step": steps, "epoch": np.round(steps / 131.0, 2)})
    assert infer_steps_per_epoch(t) == 131


def test_steps_per_epoch_override_and_parser_value_order() -> None:
    res = ParseResult(
        table=pl.DataFrame({"step": [1, 2, 3], "loss": [1.0] * 3, "line_no": [1, 2, 3], "epoch": [0.5, 1.0, 1.5]}),
        steps_per_epoch=7,
    )
    assert build_run(res, "x", "jsonl").meta.steps_per_epoch == 7
    assert build_run(res, "x", "jsonl", steps_per_epoch=42).meta.steps_per_epoch == 42


def test_cumulative_token_counter_becomes_per_step() -> None:
    steps = list(range(15, 301, 15))
    total = [s * 4096.0 for s in steps]
    run = build_run(_result(steps, tokens=total), "x", "hf_trainer_state")
    assert run.table["tokens"].to_list() == [4096.0] * len(steps)
    assert run.table["tokens_cumulative"][-1] == 300 * 4096.0
    assert any("running total" in n for n in run.meta.notes)


@pytest.mark.parametrize(
    "tokens",
    [
        [4096.0] * 40,  # packed: constant per batch
        list(np.random.default_rng(1).integers(3000, 5000, 40).astype(float)),  # per-batch noise
        list(np.linspace(1000, 8000, 40)),  # length-sorted batches: rising but not proportional
    ],
    ids=["constant", "noisy", "sorted-ramp"],
)
def test_per_batch_token_counts_are_not_decumulated(tokens: list[float]) -> None:
    run = build_run(_result(list(range(1, 41)), tokens=tokens), "x", "jsonl")
    assert run.table["tokens"].to_list() == pytest.approx(tokens)
    assert "tokens_cumulative" not in run.table.columns


def test_is_cumulative_needs_proportional_growth() -> None:
    s = np.arange(1, 101)
    assert is_cumulative(s, s * 512.0 + np.random.default_rng(0).uniform(0, 10, 100).cumsum())
    assert not is_cumulative(s, np.sort(np.random.default_rng(0).uniform(100, 200, 100)))


def test_degenerate_columns_zero_or_broken_constant() -> None:
    t = pl.DataFrame(
        {
            "step": [1, 2, 3],
            "loss": [1.0, 0.9, 0.8],
            "total_tokens": [0.0] * 3,
            "lr": [1e-4] * 3,
            "grad_norm": [2.0] * 3,
            "tokens": [4096.0] * 3,
        }
    )
    assert degenerate_columns(t) == [("total_tokens", 0.0), ("grad_norm", 2.0)]
    run = build_run(_result([1, 2, 3], throughput=[0.0] * 3), "x", "jsonl")
    assert any(n.startswith("throughput: constant 0") for n in run.meta.notes)
    assert "throughput" in run.table.columns


def test_late_block_filling_a_gap_is_out_of_order_not_a_resume() -> None:
    steps = [*range(1, 101), *range(150, 201), *range(101, 150)]
    run = build_run(_result(steps), "x", "text")
    assert run.meta.resumes == 0
    assert run.meta.nonmonotonic_steps == 1
    assert run.table["step"].to_list() == list(range(1, 201))


def test_resume_with_shifted_logging_phase_is_still_a_resume() -> None:
    # logged every 10 steps to 300; the restart from step 201 logs 205, 215, ...: no exact repeat
    steps = [*range(10, 301, 10), *range(205, 406, 10)]
    run = build_run(_result(steps), "x", "jsonl")
    assert run.meta.resume_steps == (205,)
    assert run.meta.overwritten_steps == 10
