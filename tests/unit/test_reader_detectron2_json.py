"""detectron2 ``metrics.json``: JSONWriter lines are read by default, its evaluations apart.

The writer: detectron2/utils/events.py JSONWriter.write (``to_save[iter][k] = v`` then
``json.dumps(scalars_per_iter, sort_keys=True)`` with ``"iteration"``, lines 123-130); the loss is
``total_loss``, the sum of the loss dict (engine/train_loop.py:407-418), beside each part; the
evaluation results are ``task/metric`` keys (evaluation/testing.py ``flatten_results_dict``,
engine/hooks.py:536-545).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import pipeline, vocab
from logdoctor.ingest.aliases import FieldMap
from tests.unit.blindcache import blind_log


def _line(**values: float) -> str:
    return json.dumps(values, sort_keys=True) + "\n"


def _metrics(tmp: Path, n: int = 10, evals: bool = True) -> Path:
    rows = []
    for k in range(n):
        it = 19 + 20 * k
        cls, box = 1.0 - k / 20, 0.5 - k / 40
        rows.append(
            _line(
                iteration=it,
                data_time=0.01,
                eta_seconds=100.0 - k,
                loss_cls=cls,
                loss_box_reg=box,
                total_loss=cls + box,
                lr=0.0002 * (k + 1),
                **{"fast_rcnn/cls_accuracy": 0.6},
            )
        )
        if evals and k == n // 2:
            rows.append(
                _line(iteration=it, **{"bbox/AP": 31.5, "bbox/AP50": 52.0, "segm/AP": 28.0, "bbox/APs": float("nan")})
            )
    path = tmp / "metrics.json"
    path.write_text("".join(rows))
    return path


def test_total_loss_is_the_training_loss_and_ap_rows_are_evaluations(tmp_path: Path) -> None:
    run = pipeline.load(str(_metrics(tmp_path)))
    assert run.meta.format == "jsonl"
    assert run.table["step"].to_list()[:2] == [19, 39]
    assert run.table["loss"][0] == pytest.approx(1.5)
    assert {"loss_cls", "loss_box_reg"} <= set(run.table.columns)  # the parts stay columns
    assert run.evals["step"].to_list() == [119]
    assert run.evals["bbox_ap"].to_list() == [31.5]
    assert "bbox_aps" not in run.evals.columns  # NaN: undefined (no small object), not a failure
    assert any("total_loss" in n for n in run.meta.notes)


def test_a_named_loss_wins_over_a_total(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text("".join(_line(iteration=i, loss=2.0, total_loss=9.0) for i in range(1, 5)))
    assert pipeline.load(str(path)).table["loss"].to_list() == [2.0] * 4


def test_map_still_chooses(tmp_path: Path) -> None:
    run = pipeline.load(str(_metrics(tmp_path, evals=False)), fields=FieldMap.parse(["loss=loss_cls"]))
    assert run.table["loss"][0] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("key", "is_result"),
    [
        ("bbox/AP", True),
        ("segm/AP50", True),
        ("sem_seg/mIoU", True),
        ("panoptic_seg/PQ", True),
        ("metrics/mAP50(B)", True),
        ("metrics/precision", True),
        ("metrics/mAP_0.5:0.95", True),
        ("coco/bbox_mAP", True),
        ("accuracy/top1", True),
        ("single-label/f1-score", True),
        ("bbox/num_fg", False),
        ("coco/loss_bbox", False),
        ("fast_rcnn/cls_accuracy", False),
        ("loss_box_reg", False),
        ("bbox_loss", False),
        ("metrics/lr", False),
    ],
)
def test_result_keys(key: str, is_result: bool) -> None:
    assert vocab.is_eval(key) is is_result  # the vocabulary's decision, one place for every reader


def test_real_metrics_json() -> None:
    run = pipeline.load(str(blind_log("detectron2_plainloop_gdp_five_launches_metrics.json")))
    assert run.meta.structure.last_step == 839  # the last of its five launches (total_loss only)
    run = pipeline.load(str(blind_log("detectron2_mask2former_mgm_three_launches_metrics.json")))
    assert "segm_ap" in run.evals.columns and run.meta.structure.last_step == 3999
    report = pipeline.analyze(run)
    assert "LD009" not in {f.code for f in report.findings}  # its NaN APs are undefined metrics


def test_log_txt_common_metric_printer(tmp_path: Path) -> None:
    """detectron2/utils/events.py CommonMetricPrinter.write (:276-277): `` {eta}iter: {iter}  {losses}
    {non_losses}  {avg_time}{last_time}{avg_data_time}{last_data_time} lr: {lr}  {memory}``, the losses
    ``"{}: {:.4g}"`` with total_loss first; MAX_ITER in the config dump is the plan."""
    lines = ["[12/07 12:00:00 detectron2]: Running with full config:", "SOLVER:", "  MAX_ITER: 200", "  BASE_LR: 0.02"]
    for k in range(10):
        it = 19 + 20 * k
        lines.append(
            f"[12/07 12:00:{k:02d} d2.utils.events]:  eta: 0:01:00  iter: {it}  total_loss: "
            f"{1.5 - k / 20:.4g}  loss_cls: {1.0 - k / 20:.4g}  loss_box_reg: 0.5  time: 0.3000  "
            f"last_time: 0.2900  data_time: 0.0100  last_data_time: 0.0090   lr: 0.0002  max_mem: 3000M"
        )
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines) + "\n")
    run = pipeline.load(str(path))
    st = run.meta.structure
    assert run.table["step"].to_list()[:2] == [19, 39]
    assert run.table["loss"][0] == pytest.approx(1.5)
    assert (st.planned, st.planned_source, st.ending) == (200, "config", "finished")
