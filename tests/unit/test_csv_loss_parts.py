"""A CSV of loss parts only (an Ultralytics results.csv) is read as their sum, which the trainer steps on;
``--map`` still names one part; parts that no trainer sums are refused with the choices only by the text reader."""

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


def test_loss_parts_are_read_as_their_sum_and_the_note_says_so(tmp_path: Path) -> None:
    run = pipeline.load(str(_results(tmp_path)))
    assert run.table.height == 10 and run.table["loss"][0] == pytest.approx(1.35 + 2.0 + 1.18)
    note = next(n for n in run.meta.notes if "only its parts" in n)
    assert "`train/box_loss` + `train/cls_loss` + `train/dfl_loss`" in note and "val/box_loss" not in note
    assert "--map loss=<field>" in note


def test_a_table_of_no_loss_at_all_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text("epoch,metrics/mAP50(B),lr/pg0\n" + "".join(f"{e},{0.1 * e},0.001\n" for e in range(1, 11)))
    with pytest.raises(LogdoctorError, match="no record holds a training loss"):
        pipeline.load(str(path))


def test_the_named_part_is_then_read(tmp_path: Path) -> None:
    run = pipeline.load(str(_results(tmp_path)), fields=FieldMap.parse(["loss=train/box_loss"]))
    assert run.table.height == 10 and run.table["loss"][0] == 1.35


def test_the_refusal_offers_loss_parts_never_the_fp16_loss_scale() -> None:
    """A DeepSpeed config dump prints ``loss_scale``, ``loss_scale_window`` and the scaler's
    ``reducing_dynamic_loss_scale_from``: names holding the word 'loss' that are no part of the objective,
    never offered as ``--map loss=`` choices; a loss part beside them is."""
    from logdoctor.ingest.parsers.losspick import refusal_hint

    scale = ["loss_scale", "loss_scale_window", "reducing_dynamic_loss_scale_from", "initial_scale_power"]
    assert refusal_hint(scale) == ""
    assert refusal_hint([*scale, "loss_mel", "loss_kl"]).endswith("--map loss=loss_kl or --map loss=loss_mel")
