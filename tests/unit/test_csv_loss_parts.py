"""A CSV of loss parts only (an Ultralytics results.csv) is refused with the choices that name one."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.errors import LogdoctorError
from logdoctor.ingest.aliases import FieldMap

_HEADER = "epoch,time,train/box_loss,train/cls_loss,train/dfl_loss,metrics/mAP50(B),val/box_loss,val/cls_loss,lr/pg0\n"


def _results(tmp_path: Path) -> Path:
    rows = "".join(
        f"{e},{60.5 * e:.1f},{1.4 - 0.05 * e:.5f},{2.1 - 0.1 * e:.5f},{1.2 - 0.02 * e:.5f},{0.1 * e:.5f},"
        f"{1.3 - 0.04 * e:.5f},{1.9 - 0.08 * e:.5f},0.00055\n"
        for e in range(1, 11)
    )
    path = tmp_path / "results.csv"
    path.write_text(_HEADER + rows)
    return path


def test_loss_parts_are_named_as_the_choices_not_called_no_loss_column(tmp_path: Path) -> None:
    with pytest.raises(LogdoctorError, match="only parts of it") as err:
        pipeline.load(str(_results(tmp_path)))
    assert "--map loss=train/box_loss" in str(err.value)
    assert "val/box_loss" not in str(err.value).split("(columns")[0]


def test_the_named_part_is_then_read(tmp_path: Path) -> None:
    run = pipeline.load(str(_results(tmp_path)), fields=FieldMap.parse(["loss=train/box_loss"]))
    assert run.table.height == 10 and run.table["loss"][0] == 1.35
