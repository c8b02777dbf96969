"""YOLOv5 ``results.txt``: rows written with train.py's own format strings are read by default."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers import sniff
from logdoctor.ingest.sources import open_source
from tests.unit.blindcache import blind_log


def _row(epoch: int, epochs: int, losses: tuple[float, float, float], results: tuple[float, ...]) -> str:
    """One row as yolov5 train.py (efe60b5^:349-350, 392-393) writes it."""
    box, obj, cls = losses
    mloss = (box, obj, cls, box + obj + cls)
    s = ("%10s" * 2 + "%10.4g" * 6) % (f"{epoch}/{epochs - 1}", "3.41G", *mloss, 17, 640)
    return s + "%10.4g" * 7 % results + "\n"


def _yolodet_row(epoch: int, epochs: int, total: float) -> str:
    """One row as the yolodet fork (yoloall yolodet/api/train.py:264-265, 316) writes it."""
    s = ("%10s" * 3 + "%10.4g" * 7) % (
        f"{epoch}/{epochs - 1}",
        "3.4G",
        "625/625",
        50.0,
        100.0,
        60.0,
        total,
        95,
        0.0003328,
        960,
    )
    return s + "%10.4g" * 7 % (0, 0, 0, 0, 0, 0, 0) + "\n"


def _write(tmp: Path, rows: list[str], name: str = "results.txt") -> Path:
    path = tmp / name
    path.write_text("".join(rows))
    return path


def _results(e: int) -> tuple[float, ...]:
    return (0.5 + e / 100, 0.4, 0.3 + e / 200, 0.1 + e / 400, 0.05, 0.02, 0.0)


def test_a_finished_run_is_read_with_its_plan_and_evaluations(tmp_path: Path) -> None:
    rows = [_row(e, 10, (0.1 - e / 200, 0.03, 0.0), _results(e)) for e in range(10)]
    path = _write(tmp_path, rows)
    assert sniff(open_source(str(path))).name == "yolov5_results"
    run = pipeline.load(str(path))
    st = run.meta.structure
    assert run.table["step"].to_list() == list(range(1, 11))  # epochs done
    assert run.table["epoch"].to_list() == [float(e) for e in range(10)]  # as written
    assert run.table["loss"][0] == pytest.approx(0.1 + 0.03, rel=1e-3)  # the total column
    assert "box_loss" in run.table.columns and "gpu_mem_gb" in run.table.columns
    assert (st.planned, st.planned_source, st.ending) == (10, "column", "finished")
    assert run.evals.height == 10
    assert run.evals["metrics_map_0_5"][3] == pytest.approx(0.315, rel=1e-3)
    assert run.evals["val_box_loss"][0] == pytest.approx(0.05)
    # the validation loss is written only as its parts: its total is their sum, as train.py's total is
    assert run.evals["val_loss"][0] == pytest.approx(0.05 + 0.02 + 0.0)
    assert any("val_loss" in n and "sum of its parts" in n for n in run.meta.notes)


def test_val_loss_rising_while_the_train_loss_falls_is_overfitting(tmp_path: Path) -> None:
    """The summed validation loss is the series LD410 reads: rising from epoch 30 while the training
    parts keep falling is overfitting; the same run with the validation loss falling to the end is silent."""
    from logdoctor.detectors.overfitting import OverfittingDetector

    def results(e: int, rise: bool) -> tuple[float, ...]:
        vbox = 0.05 - 0.02 * min(e, 30) / 30 + (0.0004 * max(0, e - 30) if rise else -0.0001 * max(0, e - 30))
        return (0.5, 0.4, 0.6, 0.3, vbox, 0.02 - 0.005 * min(e, 30) / 30, 0.0)

    for rise, codes in ((True, ["LD410"]), (False, [])):
        rows = [_row(e, 100, (0.1 * 0.98**e, 0.03 * 0.99**e, 0.0), results(e, rise)) for e in range(100)]
        run = pipeline.load(str(_write(tmp_path, rows)))
        assert [f.code for f in OverfittingDetector().analyze(run).findings] == codes


def test_a_run_cut_short_is_stopped_before_its_plan(tmp_path: Path) -> None:
    rows = [_row(e, 300, (0.1, 0.03, 0.01), _results(e)) for e in range(156)]
    st = pipeline.load(str(_write(tmp_path, rows))).meta.structure
    assert (st.last_step, st.planned, st.ending) == (156, 300, "stopped")


def test_epochs_without_validation_are_no_evaluations(tmp_path: Path) -> None:
    """``--notest``: results stay the zeros train.py starts from until the final epoch."""
    rows = [_row(e, 5, (0.1, 0.03, 0.01), (0,) * 7) for e in range(4)]
    rows.append(_row(4, 5, (0.1, 0.03, 0.01), _results(4)))
    run = pipeline.load(str(_write(tmp_path, rows)))
    assert run.evals["step"].to_list() == [5]


def test_nan_losses_are_data_not_a_refusal(tmp_path: Path) -> None:
    rows = [_row(0, 300, (0.1, 0.03, 0.01), _results(0))]
    rows += [_row(e, 300, (math.nan, 0.03, 0.01), _results(e)) for e in range(1, 4)]
    run = pipeline.load(str(_write(tmp_path, rows)))
    assert run.table["loss"].is_nan().sum() == 3


def test_the_yolodet_layout_reads_its_batch_counter_and_lr(tmp_path: Path) -> None:
    path = _write(tmp_path, [_yolodet_row(e, 300, 210.0 - e) for e in range(3)])
    run = pipeline.load(str(path))
    assert run.table["loss"].to_list() == [210.0, 209.0, 208.0]
    assert run.table["lr"][0] == pytest.approx(0.0003328)
    assert run.evals.height == 0  # test off: every result 0


@pytest.mark.parametrize(
    "text",
    [
        "     0/299    0.816G    0.1048    0.0256         0    0.1304         3       640\n",  # a bar line only
        "epoch box obj cls total\n0/9 1G 1 2 3 4\n",  # a header
        "     0/299      0.8     0.1048    0.0256         0    0.1304         3       640  0.001616"
        "   0.03704 0.0004032 4.865e-05   0.09917   0.02349         0\n",  # memory without its unit
    ],
)
def test_lines_that_are_not_results_rows_are_left_to_other_readers(tmp_path: Path, text: str) -> None:
    path = tmp_path / "x.txt"
    path.write_text(text)
    assert sniff(open_source(str(path))).name != "yolov5_results"


@pytest.mark.parametrize(
    ("name", "rows", "planned", "ending"),
    [
        ("yolov5_v50_apex_exp9_overfit_results.txt", 300, 300, "finished"),
        ("yolov5_v50_apex_exp10_stopped_156of300_results.txt", 156, 300, "stopped"),
        ("yolodet_yoloall_exp29_nan_epoch4_results.txt", 13, 300, "stopped"),
    ],
)
def test_real_results_txt(name: str, rows: int, planned: int, ending: str) -> None:
    """Public runs of the writer (bench/blind manifest; skipped when the cache lacks them)."""
    run = pipeline.load(str(blind_log(name)))
    st = run.meta.structure
    assert (run.meta.format, st.rows, st.planned, st.ending) == ("yolov5_results", rows, planned, ending)


def test_results_csv_headers_with_spaces_and_validation_results(tmp_path: Path) -> None:
    """yolov5 utils/loggers/__init__.py (96e36a7:99-110): header ``'%20s,' * n`` and rows ``'%20.5g,' * n``;
    ``metrics/*`` are the validator's results, evaluations. The loss is given here with --map: a
    table of loss parts alone is another rule's question."""
    keys = [
        "train/box_loss",
        "train/obj_loss",
        "train/cls_loss",
        "metrics/precision",
        "metrics/recall",
        "metrics/mAP_0.5",
        "metrics/mAP_0.5:0.95",
        "val/box_loss",
        "val/obj_loss",
        "val/cls_loss",
        "x/lr0",
        "x/lr1",
        "x/lr2",
    ]
    n = len(keys) + 1
    lines = [("%20s," * n % tuple(["epoch", *keys])).rstrip(",")]
    for e in range(4):
        vals = [0.09 - e / 100, 0.08, 0.07, 0.1 + e / 10, 0.2, 0.3 + e / 20, 0.1, 0.08, 0.07, 0.06, 0.003, 0.003, 0.07]
        lines.append(("%20.5g," * n % tuple([e, *vals])).rstrip(","))
    path = tmp_path / "results.csv"
    path.write_text("\n".join(lines) + "\n")
    from logdoctor.ingest.aliases import FieldMap

    run = pipeline.load(str(path), fields=FieldMap.parse(["loss=train/box_loss"]))
    assert run.table["step"].to_list() == [0, 1, 2, 3]
    assert run.table["loss"][0] == pytest.approx(0.09)
    assert "metrics_map_0_5" in run.evals.columns and "metrics_map_0_5" not in run.table.columns
    assert run.evals["val_box_loss"].to_list() == [0.08] * 4
