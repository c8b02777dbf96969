"""timm train.py's args.yaml beside its summary.csv states the plan as create_scheduler_v2 counts it
(timm/scheduler/scheduler_factory.py; train.py prints it as ``Scheduled epochs: N``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.ingest.sidecars import read_sidecar


def _args(tmp: Path, **keys: object) -> Path:
    base: dict[str, object] = {
        "epochs": 10, "sched": "cosine", "cooldown_epochs": 0, "warmup_epochs": 5, "warmup_prefix": "false",
        "lr_cycle_limit": 1, "lr_cycle_mul": 1.0, "model": "resnet50",
    }  # fmt: skip
    base.update(keys)
    (tmp / "args.yaml").write_text("".join(f"{k}: {v}\n" for k, v in sorted(base.items())))
    log = tmp / "summary.csv"
    log.write_text("epoch,train_loss,eval_loss,eval_top1,eval_top5,lr\n")
    return log


@pytest.mark.parametrize(
    ("keys", "planned"),
    [
        ({}, 10),  # the warm-up within the epochs (warmup_prefix false)
        ({"warmup_prefix": "true"}, 15),
        ({"cooldown_epochs": 3}, 13),  # a cycle schedule adds the cooldown
        ({"sched": "step", "cooldown_epochs": 3}, 10),  # a step schedule has no cycle length: no cooldown
        ({"sched": "step", "warmup_prefix": "true"}, 15),
        ({"lr_cycle_limit": 2}, 20),
        ({"lr_cycle_limit": 2, "lr_cycle_mul": 2.0}, 30),
    ],
)
def test_the_plan_is_the_schedulers(tmp_path: Path, keys: dict[str, object], planned: int) -> None:
    plan = read_sidecar(_args(tmp_path, **keys))
    assert plan is not None and (plan.epochs, plan.source) == (planned, "args.yaml")


def test_an_args_yaml_without_a_schedule_states_no_plan(tmp_path: Path) -> None:
    log = tmp_path / "summary.csv"
    log.write_text("epoch,train_loss\n")
    (tmp_path / "args.yaml").write_text("epochs: 10\n")
    plan = read_sidecar(log)
    assert plan is not None and plan.epochs is None and "ignored" in plan.note
