"""The planned length a log states in a config dump, and what is never read as one."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers.configdump import config_markers, dump_texts
from logdoctor.ingest.parsers.lines import LINE, LINE_NO
from logdoctor.ingest.parsers.markers import scan_markers
from logdoctor.structure.epochcut import unfinished_epoch
from tests.unit.blindcache import blind_log


def _planned_epochs(*lines: str) -> int | None:
    frame = pl.DataFrame({LINE_NO: list(range(1, len(lines) + 1)), LINE: list(lines)})
    return scan_markers(frame).epochs_planned


@pytest.mark.parametrize(
    ("line", "epochs"),
    [
        ("Namespace(arch='resnet18', batch_size=256, epochs=20, lr=0.1)", 20),  # argparse
        ("runner = dict(type='EpochBasedRunner', max_epochs=210)", 210),  # mmcv 2.x config dump
        ("train_cfg = dict(by_epoch=True, max_epochs=300, val_interval=10)", 300),  # mmengine
        ("total_epochs = 12", 12),  # mmdet 1.x/2.x
        ("epochs: 300", 300),  # YAML (ultralytics args.yaml, yolov5 opt.yaml)
        ("  max_epochs: 100", 100),  # Lightning hparams
        ("'num_train_epochs': 3.0,", 3),  # HF TrainingArguments print
        ("Scheduled epochs: 300. LR stepped per epoch.", 300),  # timm train.py
        ("  Num Epochs = 10", 10),  # HF Trainer banner
    ],
)
def test_planned_epochs_in_config_dumps(line: str, epochs: int) -> None:
    assert _planned_epochs(line) == epochs


@pytest.mark.parametrize(
    "line",
    [
        "warmup_epochs=5",  # a part of the schedule
        "lr_decay_epochs: 30",
        "[config] after-epochs: 0",  # Marian: no limit
        "    total number of epochs: 3",  # Megatron's dataset index mapping
        "data_efficiency_config ....... {'data_sampling': {'enabled': False, 'num_epochs': 1000}}",  # DeepSpeed
        "step 5 epochs=0.5 loss=1.2",  # a count that goes on
        "epochs=3/10",
        "epochs: 0",
    ],
)
def test_no_plan_from_what_is_not_a_budget(line: str) -> None:
    assert _planned_epochs(line) is None


def _mmdet_json(tmp: Path, max_epochs: int, epochs: int, iters: int) -> Path:
    """mmcv TextLoggerHook: the first line dumps runner.meta (mmdet apis/train.py puts
    ``cfg.pretty_text`` under ``config``), then one record per logging interval."""
    config = (
        "model = dict(type='FasterRCNN')\noptimizer = dict(type='SGD', lr=0.02)\n"
        f"runner = dict(type='EpochBasedRunner', max_epochs={max_epochs})\nwarmup_epochs = 1\n"
    )
    lines = [json.dumps({"env_info": "sys.platform: linux\nPython: 3.8", "config": config, "seed": 0})]
    for ep in range(1, epochs + 1):
        for it in range(50, iters + 1, 50):
            lines.append(
                json.dumps(
                    {
                        "mode": "train",
                        "epoch": ep,
                        "iter": it,
                        "lr": 0.02,
                        "memory": 2949,
                        "loss_cls": 0.5,
                        "loss_bbox": 0.4,
                        "loss": 0.9 - ep / 100,
                        "time": 0.3,
                    }
                )
            )
        lines.append(json.dumps({"mode": "val", "epoch": ep, "iter": iters, "lr": 0.02, "bbox_mAP": 0.3}))
    path = tmp / "20210311_173506.log.json"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_mmdet_log_json_plan_from_its_config_record(tmp_path: Path) -> None:
    st = pipeline.load(str(_mmdet_json(tmp_path, 12, 12, 500))).meta.structure
    assert (st.planned_epochs, st.planned_epochs_source, st.ending) == (12, "config", "finished")
    st = pipeline.load(str(_mmdet_json(tmp_path, 24, 2, 500))).meta.structure
    assert (st.planned_epochs, st.ending) == (24, "stopped")


def test_dump_texts_and_config_markers() -> None:
    records = pl.DataFrame({"config": ["a = 1\nmax_epochs=7\nb = 2", None], "mode": ["x", "train"]})
    texts = dump_texts(records)
    assert texts == ["a = 1\nmax_epochs=7\nb = 2"]
    assert config_markers(texts).epochs_planned == 7
    assert config_markers([]).epochs_planned is None


def _mmdet_text(tmp: Path, last_iter: int) -> Path:
    """mmcv TextLoggerHook text lines ``Epoch [e][i/N]\tlr: ..., loss: ...`` after a config dump."""
    lines = ["runner = dict(type='EpochBasedRunner', max_epochs=2)"]
    for ep in (1, 2):
        for it in range(50, 1001, 50):
            if ep == 2 and it > last_iter:
                break
            lines.append(
                f"2021-05-05 08:44:12,123 - mmdet - INFO - Epoch [{ep}][{it}/1000]\tlr: 2.000e-02, "
                "eta: 1:00:00, time: 0.300, data_time: 0.010, memory: 3000, loss_cls: 0.5, "
                f"loss: {1 - it / 5000:.4f}"
            )
    path = tmp / "20210505_084356.log"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("last_iter", "ending"), [(1000, "finished"), (950, "finished"), (700, "stopped")])
def test_the_last_epoch_cut_by_its_position(tmp_path: Path, last_iter: int, ending: str) -> None:
    assert pipeline.load(str(_mmdet_text(tmp_path, last_iter))).meta.structure.ending == ending


def test_unfinished_epoch_edges() -> None:
    """More than one logging interval (50) short of the epoch's end is unfinished; one interval is not
    (a logger printing every 50 iterations of 200 never prints 200/200)."""
    rows = pl.DataFrame({LINE_NO: [1, 2, 3], "batches": [50.0, 100.0, 150.0], "batches_total": [201.0] * 3})
    assert unfinished_epoch(rows) is True
    assert unfinished_epoch(rows.with_columns(pl.lit(200.0).alias("batches_total"))) is False
    assert unfinished_epoch(pl.DataFrame({LINE_NO: [1], "batches": [1.0], "batches_total": [9.0]})) is False
    assert unfinished_epoch(pl.DataFrame({LINE_NO: [1, 2], "step": [1, 2]})) is False


@pytest.mark.parametrize(
    ("name", "planned_epochs", "ending"),
    [
        ("mmdet2_atss_nan_from_iter450.log.json", 12, "finished"),
        ("mmdet2_cornernet_stopped_113of210.log.json", 210, "stopped"),
        ("mmdet2_carafed_faster_2x_stopped_ep24_it4700.log", 24, "stopped"),
        ("mmdet2_yolov3_d53_273ep_map_decline.log.json", 273, "finished"),
    ],
)
def test_real_openmmlab_plans(name: str, planned_epochs: int, ending: str) -> None:
    st = pipeline.load(str(blind_log(name))).meta.structure
    assert (st.planned_epochs, st.ending) == (planned_epochs, ending)


@pytest.mark.parametrize(
    ("lines", "epochs"),
    [
        (["\x1b[4m\x1b[1m > EPOCH: 1/1000\x1b[0m", "\x1b[4m\x1b[1m > EPOCH: 2/1000\x1b[0m"], 1000),  # Coqui
        (["\x1b[1mEpoch 1/30\x1b[0m", "\x1b[1mEpoch 2/30\x1b[0m"], 30),  # a coloured Keras-style header
        (["Epoch 1/30", "Epoch 2/30"], 30),
    ],
)
def test_an_epoch_header_in_terminal_colours_states_the_plan(lines: list[str], epochs: int) -> None:
    # colour codes around a header are no text of it: the epoch and its planned total are read through them
    frame = pl.DataFrame({LINE_NO: list(range(1, len(lines) + 1)), LINE: lines})
    m = scan_markers(frame)
    assert m.epoch_values == (1, 2) and m.epochs_planned == epochs
