"""OpenMMLab text logs (mmcv, mmengine): bracketed epoch/iteration counters and their evaluations."""

from __future__ import annotations

from pathlib import Path

from logdoctor import pipeline

_HEAD = "2023/01/02 10:00:{s:02d} - mmengine - INFO - "


def _mmengine(tmp_path: Path, epochs: int = 4, iters: int = 5) -> Path:
    lines = []
    for e in range(1, epochs + 1):
        for i in range(1, iters + 1):
            loss = 0.9 - 0.01 * ((e - 1) * iters + i)
            lines.append(
                _HEAD.format(s=i) + f"Epoch(train)  [{e}][{i}/{iters}]  lr: 1.000000e-03  eta: 0:10:00  "
                f"time: 0.512000  data_time: 0.101000  loss: {loss:.6f}  loss_kpt: {loss:.6f}  acc_pose: 0.2"
            )
        lines.append(_HEAD.format(s=50) + "Saving checkpoint at 2 epochs")
        lines.append(_HEAD.format(s=51) + "Evaluating PCKAccuracy...")
        lines.append(_HEAD.format(s=52) + f"Epoch(val) [{e}][2/2]    PCK: 0.5{e}  AUC: 0.01  NME: 0.2  time: 1.2")
    path = tmp_path / "20230102_100000.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_mmengine_epoch_and_iteration_make_the_step(tmp_path: Path) -> None:
    run = pipeline.load(str(_mmengine(tmp_path)))
    assert run.table["step"].to_list() == list(range(1, 21))
    assert run.table["epoch"].to_list() == [float(e) for e in range(1, 5) for _ in range(5)]
    assert run.meta.structure.epochs == 4
    assert not any("prints no step numbers" in n for n in run.meta.notes)


def test_the_training_line_after_an_evaluating_banner_stays_a_training_step(tmp_path: Path) -> None:
    # the result of "Evaluating PCKAccuracy..." is the Epoch(val) line (no loss word in it), not
    # the next epoch's first training line
    run = pipeline.load(str(_mmengine(tmp_path)))
    assert run.table.height == 20
    assert run.table.filter(run.table["step"] == 6)["loss"].item() == 0.84


def test_mmcv_epoch_and_iter_counters(tmp_path: Path) -> None:
    epoch_log = "".join(
        f"2021-05-01 10:00:00,000 - mmdet - INFO - Epoch [{e}][{i}/150]\tlr: 2.000e-02, eta: 1:00:00, "
        f"time: 0.400, data_time: 0.010, memory: 3060, loss_cls: 0.5, loss_bbox: 0.3, loss: {1.5 - 0.01 * e:.4f}\n"
        for e in range(1, 4)
        for i in range(50, 151, 50)
    )
    (tmp_path / "a.log").write_text(epoch_log)
    run = pipeline.load(str(tmp_path / "a.log"))
    assert run.table["step"].to_list() == [50, 100, 150, 200, 250, 300, 350, 400, 450]
    iter_log = "".join(
        f"2022-03-01 10:00:00,000 - mmseg - INFO - Iter [{i}/40000]\tlr: 9.9e-03, eta: 5:00:00, "
        f"time: 0.300, data_time: 0.010, memory: 4000, decode.loss_ce: 0.9, loss: {1.1 - i / 1e4:.4f}\n"
        for i in range(50, 1001, 50)
    )
    (tmp_path / "b.log").write_text(iter_log)
    run = pipeline.load(str(tmp_path / "b.log"))
    assert run.table["step"].to_list() == list(range(50, 1001, 50))
    assert run.meta.total_steps == 40000
