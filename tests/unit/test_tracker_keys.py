"""Namespaced tracker keys and the configuration facts a run states."""

from __future__ import annotations

import polars as pl

from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.configfacts import config_facts, epoch_length, planned_steps
from logdoctor.ingest.namespaced import canonical_renames, dropped


def test_hf_counters_become_step_and_epoch() -> None:
    cols = ["train/loss", "train/epoch", "train/global_step", "_step", "_runtime", "eval/loss"]
    renames = canonical_renames(cols, FieldMap())
    assert renames == {"train/epoch": "epoch", "train/global_step": "step"}
    assert dropped(cols, renames) == ["_step", "_runtime"]


def test_wandb_step_only_when_nothing_else_is_the_step() -> None:
    assert canonical_renames(["loss", "_step"], FieldMap()) == {"_step": "step"}
    assert canonical_renames(["step", "loss", "_step", "train/epoch", "epoch"], FieldMap()) == {}


def test_epoch_aggregates_are_not_renamed() -> None:
    # Lightning's train_loss_epoch is an epoch-level value, not the epoch counter
    assert canonical_renames(["train/loss_epoch", "train_loss_epoch"], FieldMap()) == {}


def test_facts_from_flat_nested_and_text_configs() -> None:
    facts = config_facts(
        {"trainer": {"max_epochs": 3, "accumulate_grad_batches": 2}, "data": {"batch_size": 32}, "max_steps": -1},
        "wandb config",
    )
    assert [(f.name, f.value, f.source) for f in facts] == [
        ("epochs", 3, "wandb config trainer.max_epochs"),
        ("batch_size", 32, "wandb config data.batch_size"),
        ("grad_accum", 2, "wandb config trainer.accumulate_grad_batches"),
    ]
    params = config_facts(
        {"num_train_epochs": "8.0", "group_by_length": "True", "max_steps": "5000", "lr_scheduler_type": "linear"},
        "mlflow params",
    )
    got = {f.name: f.value for f in params}
    assert got == {"epochs": 8, "max_steps": 5000, "group_by_length": True, "lr_schedule": "linear"}
    assert planned_steps(params) == 5000 and planned_steps(facts) is None


def test_shallowest_key_wins_and_noise_is_no_fact() -> None:
    facts = config_facts({"model": {"epochs": 1}, "epochs": 4, "scheduler": "", "notes": "x" * 500}, "cfg")
    assert [(f.name, f.value) for f in facts] == [("epochs", 4)]


def test_epoch_length_needs_a_clean_end_even_division_and_no_epoch_column() -> None:
    facts = config_facts({"num_train_epochs": 4}, "cfg")
    table = pl.DataFrame({"step": list(range(1, 401)), "loss": [1.0] * 400})
    assert epoch_length(facts, table, finished=True)[0] == 100
    assert epoch_length(facts, table, finished=False) == (None, "")
    assert epoch_length(facts, table.head(398), finished=True) == (None, "")  # 398 / 4 is not whole
    assert epoch_length(facts, table.with_columns(epoch=pl.lit(0.0)), finished=True) == (None, "")
    capped = config_facts({"num_train_epochs": 4, "max_steps": 400}, "cfg")
    assert epoch_length(capped, table, finished=True) == (None, "")
