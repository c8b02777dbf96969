"""MMEngine ``vis_data/scalars.json``: LocalVisBackend lines, training rows apart from the evaluator's.

The writer: mmengine/visualization/vis_backend.py LocalVisBackend.add_scalars (one JSON object per
call, ``step`` added); hooks/logger_hook.py writes the training tag with ``step=runner.iter + 1``
(:199-200) and the validation metrics with ``step=runner.epoch`` (:265-266), whose names are
``{prefix}/{metric}`` (evaluator/metric.py:134-137; mmdet CocoMetric's prefix ``coco``).
"""

from __future__ import annotations

import json
from pathlib import Path

from logdoctor import pipeline
from tests.unit.blindcache import blind_log


def _scalars(tmp: Path, epochs: int, iters: int) -> Path:
    out, it = [], 0
    for ep in range(1, epochs + 1):
        for _ in range(iters):
            it += 1
            out.append(
                json.dumps(
                    {
                        "lr": 0.004,
                        "data_time": 0.01,
                        "loss": 1.0 - it / 1000,
                        "loss_cls": 0.6,
                        "loss_bbox": 0.4,
                        "time": 0.3,
                        "epoch": ep,
                        "memory": 2625,
                        "step": it,
                    }
                )
            )
        out.append(
            json.dumps(
                {
                    "coco/bbox_mAP": 0.1 * ep,
                    "coco/bbox_mAP_50": 0.2,
                    "coco/bbox_mAP_s": -1.0,
                    "data_time": 0.3,
                    "time": 0.4,
                    "step": ep,
                }
            )
        )
    path = tmp / "scalars.json"
    path.write_text("\n".join(out) + "\n")
    return path


def test_training_rows_and_validation_results(tmp_path: Path) -> None:
    run = pipeline.load(str(_scalars(tmp_path, 3, 20)))
    assert run.table.height == 60 and run.table["step"].to_list()[-1] == 60
    assert run.evals["coco_bbox_map"].to_list() == [0.1, 0.2, 0.30000000000000004]
    assert run.evals["step"].to_list() == [20, 40, 60]  # the epoch in its step, placed after its epoch's rows
    assert "coco_bbox_map_s" not in run.evals.columns  # COCO's -1: no small object, undefined


def test_real_scalars_json() -> None:
    run = pipeline.load(str(blind_log("mmengine_rtmdet_ear_stopped_81of200_scalars.json")))
    assert run.meta.structure.last_step == 1687 and "coco_bbox_map" in run.evals.columns
    assert "coco_bbox_map_s" not in run.evals.columns  # -1 at every evaluation: no small ear
