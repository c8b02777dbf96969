"""Every registered parser handles empty and one-record inputs: a clean error or a 1-step Run."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.errors import LogdoctorError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers import PARSERS, sniff
from logdoctor.ingest.parsers.tfrecord import frame, scalar_event, version_event
from logdoctor.ingest.sources import open_source
from tests.wandb_support import history, write_log

NAMES = [p.name for p in PARSERS]


def _one_record(name: str, tmp: Path) -> Path:
    """A one-step input in the parser's own format."""
    if name == "jsonl":
        (tmp / "a.jsonl").write_text('{"step": 3, "loss": 2.5}\n')
        return tmp / "a.jsonl"
    if name == "csv":
        (tmp / "a.csv").write_text("step,loss\n3,2.5\n")
        return tmp / "a.csv"
    if name == "yolov5_results":  # the third epoch's row: its step is the epochs done
        (tmp / "results.txt").write_text("     2/9    1.2G   1   1   0.5   2.5   3   640" + "   0.1" * 7 + "\n")
        return tmp / "results.txt"
    if name == "epoch_table":  # YOLOv5 v7.0 console: the header, then the third epoch's row (counted from 0)
        header = "      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size\n"
        (tmp / "out.txt").write_text(
            header + "        2/9      3.77G          1          1        0.5        214        640\n"
        )
        return tmp / "out.txt"
    if name == "hf_trainer_state":
        (tmp / "s.json").write_text('{\n "global_step": 3,\n "log_history": [{"step": 3, "loss": 2.5}]\n}\n')
        return tmp / "s.json"
    if name == "mlflow":
        (tmp / "run" / "metrics").mkdir(parents=True)
        (tmp / "run" / "metrics" / "loss").write_text("1700000000000 2.5 3\n")
        return tmp / "run"
    if name == "wandb":
        (tmp / "offline-run-1").mkdir()
        (tmp / "offline-run-1" / "run-1.wandb").write_bytes(write_log([history(3, loss=2.5)]))
        return tmp / "offline-run-1"
    if name == "tensorboard":
        (tmp / "tb").mkdir()
        data = frame(version_event(1.0)) + frame(scalar_event(2.0, 3, "loss", 2.5))
        (tmp / "tb" / "events.out.tfevents.1.h").write_bytes(data)
        return tmp / "tb"
    (tmp / "a.log").write_text("step 3 loss=2.5\n")
    return tmp / "a.log"


def _empty(name: str, tmp: Path) -> Path:
    if name == "mlflow":
        (tmp / "run" / "metrics").mkdir(parents=True)
        (tmp / "run" / "metrics" / "loss").write_text("")
        return tmp / "run"
    if name == "wandb":
        (tmp / "offline-run-1").mkdir()
        (tmp / "offline-run-1" / "run-1.wandb").write_bytes(write_log([]))
        return tmp / "offline-run-1"
    if name == "tensorboard":
        (tmp / "tb").mkdir()
        (tmp / "tb" / "events.out.tfevents.1.h").write_bytes(frame(version_event(1.0)))
        return tmp / "tb"
    (tmp / "empty").write_text("")
    return tmp / "empty"


@pytest.mark.parametrize("name", NAMES)
def test_one_record_gives_a_one_step_run(name: str, tmp_path: Path) -> None:
    if name == "tensorboard":
        import tensorboard  # noqa: F401  # in [dev]: a missing reader fails here, never skips
    path = _one_record(name, tmp_path)
    assert sniff(open_source(str(path))).name == name
    run = pipeline.load(str(path))
    assert run.meta.format == name
    assert run.table["step"].to_list() == [3]
    assert run.table["loss"].to_list() == [2.5]


@pytest.mark.parametrize("name", NAMES)
def test_empty_input_is_a_clean_error(name: str, tmp_path: Path) -> None:
    if name == "tensorboard":
        import tensorboard  # noqa: F401  # in [dev]: a missing reader fails here, never skips
    path = _empty(name, tmp_path)
    with pytest.raises(LogdoctorError):
        pipeline.load(str(path))
    with pytest.raises(LogdoctorError):
        pipeline.load(str(path), fmt=name)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("mlflow", "tensorboard")])
def test_forced_parser_on_foreign_text_is_a_clean_error(name: str, tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("hello world\nnothing to see here\n")
    parser = next(p for p in PARSERS if p.name == name)
    with pytest.raises(LogdoctorError):
        parser.parse(open_source(str(path)), FieldMap())
