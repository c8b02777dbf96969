"""compare refuses runs that are not the same experiment, and only those."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from logdoctor.comparison.build import refuse_unrelated
from logdoctor.comparison.comparable import LOSS_SCALE_LIMIT, SETUP_LIMIT, reasons
from logdoctor.errors import InputError
from logdoctor.model import Report
from tests.reportfactory import REPORTS


def _scaled(report: Report, loss: float = 1.0, spe: float = 1.0, tokens: float | None = None) -> Report:
    t = report.run.table.with_columns(pl.col("loss") * loss)
    if tokens is not None:
        t = t.with_columns(pl.lit(tokens).cast(pl.Float64).alias("tokens"))
    run = dataclasses.replace(report.run, table=t)
    spe_ = None if report.series.steps_per_epoch is None else round(report.series.steps_per_epoch * spe)
    return dataclasses.replace(report, run=run, series=dataclasses.replace(report.series, steps_per_epoch=spe_))


def test_the_same_experiment_passes() -> None:
    base = REPORTS["sorted"]()
    # a batching change: the loss starts within a few percent, epochs and batches move by tens of percent
    assert reasons(base, _scaled(REPORTS["healthy"](), 1.0, 1.3)) == []
    assert reasons(_scaled(base, tokens=8192.0), _scaled(base, 1.05, 1.28, tokens=6000.0)) == []


def test_another_loss_scale_is_refused() -> None:
    base = REPORTS["sorted"]()
    why = reasons(base, _scaled(base, loss=LOSS_SCALE_LIMIT * 1.5))
    assert len(why) == 1 and why[0].startswith("the loss starts at") and "another model or task" in why[0]
    with pytest.raises(InputError, match=r"not comparable: the loss starts at .*--force"):
        refuse_unrelated(base, [_scaled(base, loss=4.0)])


def test_another_setup_is_refused() -> None:
    base = REPORTS["sorted"]()
    assert any("steps per epoch" in w for w in reasons(base, _scaled(base, spe=SETUP_LIMIT + 1)))
    tok = reasons(_scaled(base, tokens=8192.0), _scaled(base, tokens=8192.0 * (SETUP_LIMIT + 1)))
    assert len(tok) == 1 and "tokens per step" in tok[0]


def test_unknown_facts_refuse_nothing() -> None:
    base = REPORTS["inconclusive"]()  # no epochs, no tokens
    assert reasons(base, _scaled(base, spe=10.0)) == []


def test_a_length_cycle_is_compared_over_whole_cycles() -> None:
    """Two runs with the same sawtooth (loss following sorted batch length each 100-step epoch), half
    an epoch out of phase: short windows see a difference that is only the phase; whole cycles do not."""
    from logdoctor.comparison.quality import matched

    steps = np.arange(1, 1001, dtype=float)
    saw = 2.0 + 0.5 * ((steps % 100) / 100)
    noise = np.random.default_rng(0).normal(0, 0.01, steps.size)
    shifted = 2.0 + 0.5 * (((steps + 50) % 100) / 100)
    rng = np.random.default_rng(1)
    short, _ = matched("steps", steps, saw + noise, steps, shifted + noise[::-1], rng)
    assert any(m.worse or m.better for m in short)
    whole, _ = matched("steps", steps, saw + noise, steps, shifted + noise[::-1], rng, cycle=100.0)
    assert whole and all(abs(m.diff) < 0.05 and not (m.worse or m.better) for m in whole)


def test_the_bundled_static_baseline_is_compared_like_with_like() -> None:
    from logdoctor.comparison import compare_paths
    from tests.conftest import FIXTURES

    v = compare_paths(str(FIXTURES / "compare_static.log"), [str(FIXTURES / "compare_bucketed.jsonl")]).versus[0]
    assert "whole cycles" in v.like_with_like and "epochs of 162 steps" in v.like_with_like
    same = compare_paths(str(FIXTURES / "compare_bucketed.jsonl"), [str(FIXTURES / "compare_bucketed.jsonl")])
    assert same.versus[0].like_with_like == ""


def test_configurations_naming_another_model_or_task_are_refused() -> None:
    from logdoctor.ingest.configfacts import config_facts

    def stated(report: Report, config: dict) -> Report:
        meta = dataclasses.replace(report.run.meta, config_facts=config_facts(config, "wandb config"))
        return dataclasses.replace(report, run=dataclasses.replace(report.run, meta=meta))

    base = stated(REPORTS["sorted"](), {"model_name_or_path": "/ckpt/gpt2", "task_name": "wikitext"})
    same = stated(
        REPORTS["sorted"](),
        {"model_name_or_path": "openai-community/GPT2", "dataset_name": "wikitext", "num_train_epochs": 3},
    )
    assert reasons(base, same) == []
    other = stated(REPORTS["sorted"](), {"model": {"model_name_or_path": "bert-base-uncased"}, "task": "mnli"})
    why = reasons(base, other)
    assert why == [
        "the configurations name another model (gpt2 vs bert-base-uncased)",
        "the configurations name another task (wikitext vs mnli)",
    ]
    assert reasons(base, REPORTS["sorted"]()) == []  # a run that states nothing refuses nothing
