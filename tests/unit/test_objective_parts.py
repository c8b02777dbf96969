"""An objective logged only in parts, a log of evaluations only, a loss NaN everywhere: read, not refused (47.2)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import logdoctor
from logdoctor import pipeline
from logdoctor.errors import ParseError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers.objective import objective_of, summed_eval_parts


def test_a_total_named_total_is_the_loss() -> None:
    obj = objective_of(["iteration", "lr", "total_loss", "loss_ce", "loss_mask"])
    assert obj is not None and obj.fields == ("total_loss",) and not obj.summed


@pytest.mark.parametrize(
    "parts",
    [("train/box_loss", "train/cls_loss", "train/dfl_loss"), ("train/box_loss", "train/obj_loss", "train/cls_loss"),
     ("train/box_loss", "train/pose_loss", "train/kobj_loss", "train/cls_loss", "train/dfl_loss"),
     ("loss_classifier", "loss_box_reg", "loss_objectness", "loss_rpn_box_reg")],
)  # fmt: skip
def test_detector_parts_are_summed_as_their_trainers_sum_them(parts: tuple[str, ...]) -> None:
    obj = objective_of(["epoch", *parts, "val/box_loss", "metrics/mAP50(B)"])
    assert obj is not None and obj.summed and obj.fields == parts and "sum" in obj.note


@pytest.mark.parametrize(
    ("keys", "main"),
    [(["step", "d_loss", "g_loss"], "g_loss"), (["step", "loss_physics", "loss_data"], "loss_data"),
     (["step", "loss_0", "loss_1"], "loss_1"), (["step", "discriminator_loss", "generator_loss"], "generator_loss")],
)  # fmt: skip
def test_other_parts_are_objectives_of_their_own_with_the_main_one_named(keys: list[str], main: str) -> None:
    obj = objective_of(keys)
    assert obj is not None and not obj.summed and obj.fields == (main,)
    assert f"main part `{main}`" in obj.note and all(f"`{o}`" in obj.note for o in obj.others)


def test_no_loss_field_is_no_objective() -> None:
    assert objective_of(["step", "val_loss", "val_acc", "lr"]) is None
    assert objective_of(["step", "train_loss_epoch"]) is None  # an epoch aggregate is no step's loss


def test_the_eval_split_of_summed_parts_is_summed_too() -> None:
    keys = ["train/box_loss", "train/cls_loss", "val/box_loss", "val/cls_loss", "val/dfl_loss"]
    obj = objective_of(keys)
    assert obj is not None and summed_eval_parts(obj, keys) == ("val_loss", ("val/box_loss", "val/cls_loss"))
    assert summed_eval_parts(obj, ["train/box_loss", "train/cls_loss", "val/box_loss"]) is None


def _yolo_csv(path: Path, overfit: bool) -> Path:
    head = "epoch,train/box_loss,train/cls_loss,train/dfl_loss,metrics/mAP50(B),val/box_loss,val/cls_loss,val/dfl_loss"
    rows = []
    for e in range(1, 61):
        val = [1.4 * math.exp(-e / 20) + 0.6, 1.9 * math.exp(-e / 15) + 0.5, 1.1 * math.exp(-e / 25) + 0.9]
        if overfit and e > 20:
            val = [v + 0.02 * (e - 20) for v in val]
        train = [1.5 * math.exp(-e / 20) + 0.5, 2 * math.exp(-e / 15) + 0.4, 1.2 * math.exp(-e / 25) + 0.8]
        rows.append(",".join(str(x) for x in [e, *train, 0.5 * (1 - math.exp(-e / 10)), *val]))
    path.write_text(head + "\n" + "\n".join(rows) + "\n")
    return path


def test_a_results_csv_of_parts_is_read_and_its_overfitting_found(tmp_path: Path) -> None:
    healthy = _yolo_csv(tmp_path / "healthy.csv", overfit=False)
    run = pipeline.load(str(healthy))
    assert any("their sum `train/box_loss` + `train/cls_loss` + `train/dfl_loss`" in n for n in run.meta.notes)
    assert run.table["loss"][0] == pytest.approx(
        sum([1.5 * math.exp(-1 / 20) + 0.5, 2 * math.exp(-1 / 15) + 0.4, 1.2 * math.exp(-1 / 25) + 0.8])
    )
    assert "LD410" not in {f.code for f in logdoctor.analyze(healthy).problems}
    overfit = _yolo_csv(tmp_path / "overfit.csv", overfit=True)
    assert "LD410" in {f.code for f in logdoctor.analyze(overfit).problems}


def test_map_still_chooses_the_objective(tmp_path: Path) -> None:
    path = _yolo_csv(tmp_path / "results.csv", overfit=False)
    run = pipeline.load(str(path), fields=FieldMap({"loss": "train/cls_loss"}))
    assert run.table["loss"][0] == pytest.approx(2 * math.exp(-1 / 15) + 0.4)
    assert not any("sum" in n for n in run.meta.notes)


def test_a_gan_log_is_read_with_its_generator_as_the_main_objective(tmp_path: Path) -> None:
    path = tmp_path / "gan.jsonl"
    rows = [{"step": s, "g_loss": 3 - s / 200, "d_loss": 0.7} for s in range(1, 301)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = pipeline.load(str(path))
    assert run.table["loss"][0] == pytest.approx(3 - 1 / 200)
    assert any("main part `g_loss`" in n and "`d_loss`" in n for n in run.meta.notes)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_a_log_of_evaluations_only_is_analysed_and_says_so(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"evals{suffix}"
    vals = [(s * 100, 2 - 0.1 * s, 0.1 * s) for s in range(1, 11)]
    if suffix == ".csv":
        path.write_text("step,val_loss,val_acc\n" + "".join(f"{s},{v},{a}\n" for s, v, a in vals))
    else:
        path.write_text("".join(json.dumps({"step": s, "val_loss": v, "val_acc": a}) + "\n" for s, v, a in vals))
    run = pipeline.load(str(path))
    assert run.table.height == 10 and any("only evaluations" in n and "`val_loss`" in n for n in run.meta.notes)


def test_a_log_without_any_loss_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "acc.jsonl"
    path.write_text("".join(json.dumps({"step": s, "val_acc": 0.1 * s}) + "\n" for s in range(1, 11)))
    with pytest.raises(ParseError, match="no record holds a training loss"):
        pipeline.load(str(path))


@pytest.mark.parametrize("keys", [("loss",), ("train/box_loss", "train/cls_loss", "train/dfl_loss")])
def test_a_loss_nan_everywhere_is_the_nan_finding_not_a_refusal(tmp_path: Path, keys: tuple[str, ...]) -> None:
    path = tmp_path / "nan.csv"
    path.write_text(
        "epoch," + ",".join(keys) + "\n" + "".join(f"{e}," + ",".join(["nan"] * len(keys)) + "\n" for e in range(1, 41))
    )
    report = logdoctor.analyze(path)
    assert "LD001" in {f.code for f in report.problems} and report.status == "error"
