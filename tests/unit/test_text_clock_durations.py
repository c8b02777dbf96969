"""A clock duration that is a key's value (``eta: 4:59:11``) is no number to the text reader, on
its general path and its fast path alike; times of day in a line's prefix are read as before."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers import pieces, textfast, textrules
from logdoctor.ingest.parsers.textplan import plan_for
from logdoctor.ingest.parsers.textrules import line_keys
from logdoctor.ingest.parsers.textshape import Extracted
from tests.unit.test_text_fastpath import assert_same_run

#: Steps of each made-up log: enough for the fast path to take it on.
STEPS = 400


def _mmengine(i: int) -> str:
    eta = f"{4 - i // 200}:{59 - i % 50:02d}:11"
    return (
        f"2024/01/05 20:17:{i % 60:02d} - mmengine - INFO - Epoch(train) [1][{i + 1:3d}/500]  lr: 1.0e-02"
        f"  eta: {eta}  time: 0.5123  data_time: 0.0101  memory: 3000  loss: {1.2345 + i / 1000:.4f}"
    )


def _mmengine_iter(i: int) -> str:
    """mmengine counting iterations (``by_epoch=False``): a step line the fast path reads (its
    counter unpadded here: ``[   50/40000]``'s blanks make a template per width)."""
    return (
        f"2024/01/05 20:17:{i % 60:02d} - mmengine - INFO - Iter(train) [{i + 1}/40000]  lr: 1.0e-02"
        f"  eta: 1 day, {23 - i // 20}:{59 - i % 60:02d}:11  time: 0.5123  data_time: 0.0101  memory: 3000"
        f"  loss: {1.2345 + i / 1000:.4f}"
    )


def _detectron2(i: int) -> str:
    eta = f"{'1 day, ' if i < 40 else ''}{i % 3}:{59 - i % 60:02d}:00"
    return (
        f"[08/30 23:{i % 60:02d}:36] d2.utils.events INFO:  eta: {eta}  iter: {i}  total_loss: {7.5 - i / 100:.3f}"
        f"  loss_cls: 0.5  time: 0.4120  data_time: 0.0100  lr: 0.0001  max_mem: 1234M"
    )


def _paddledet(i: int) -> str:
    return (
        f"[01/05 10:00:{i % 60:02d}] ppdet.engine INFO: Epoch: [0] [{i:3d}/460] learning_rate: 0.000010"
        f" loss: {1.2 + i / 1000:.4f} eta: 4:{16 + i % 40:02d}:32 batch_cost: 0.5000 data_cost: 0.0010"
        " ips: 8.0 images/s"
    )


def _plain(i: int) -> str:
    """A loop's own line: an elapsed clock with fractional seconds, an ETA after ``=``, some in days
    (those lines the fast path leaves to the general path: another template)."""
    eta = f"{'2 days, ' if i % 9 == 0 else ''}1:00:{i % 60:02d}"
    return f"step {i} loss {2 - i / 1000:.4f} elapsed: 0:{i // 60:02d}:{i % 60:02d}.25 ETA={eta} acc 0.5"


#: writer -> its line, the columns it must still give, whether the fast path reads it (not
#: mmengine's and PaddleDetection's epoch counters, whose step is derived, nor detectron2's
#: ``total_loss`` read as the loss: textfast._choose leaves them to the general path)
WRITERS: dict[str, tuple[Callable[[int], str], set[str], bool]] = {
    "mmengine": (_mmengine, {"lr", "time", "data_time", "memory", "epoch", "batches"}, False),
    "mmengine_iter": (_mmengine_iter, {"lr", "time", "data_time", "memory"}, True),
    "detectron2": (_detectron2, {"lr", "time", "data_time", "loss_cls", "max_mem"}, False),
    "paddledet": (_paddledet, {"lr", "batch_cost", "data_cost", "ips", "epoch", "batches"}, False),
    "plain": (_plain, {"acc"}, True),
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_clock_value_makes_no_column_and_both_paths_agree(
    writer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line, keep, read_fast = WRITERS[writer]
    path = tmp_path / f"{writer}.log"
    path.write_text("".join(line(i) + "\n" for i in range(STEPS)))
    monkeypatch.setattr(pieces, "FAST_MIN_LINES", 0)
    fast = textfast.fast_rows(path.read_bytes(), FieldMap(), Extracted())
    if read_fast:  # the fast path read most of the log itself
        assert fast is not None and fast.lines - fast.rest.height > STEPS // 2
    assert_same_run(path, monkeypatch)  # and read it as the general path does
    run = pipeline.load(str(path), fmt="text")
    columns = set(run.table.columns)
    assert not columns & {"eta", "elapsed", "day"}, columns  # no column of hours (or days)
    assert keep <= columns, keep - columns  # every other value is still read
    assert run.table.height == STEPS and run.table["loss"].null_count() == 0


@pytest.mark.parametrize(
    ("line", "want"),
    [
        (
            "Epoch(train) [1][ 50/500]  lr: 1.0e-02  eta: 4:59:11  time: 0.5123  loss: 1.2345",
            {"epoch", "batches", "batches_total", "lr", "time", "loss"},
        ),
        ("eta: 1 day, 2:03:04  iter: 19  total_loss: 7.5  lr: 0.0001", {"step", "loss", "lr"}),
        ("eta: 2 days, 0:00:09  iter: 19  total_loss: 7.5", {"step", "loss"}),
        ("step 5 loss 1.5 Total time: 0:08:01.463362 (1.41 s / iter)", {"step", "loss"}),
        ("step 5 loss 1.5 ETA=0:16:24 acc 0.5", {"step", "loss", "acc"}),
        ("step 5 loss 1.5 eta:0:16:24 acc 0.5", {"step", "loss", "acc"}),
        ("step 5 loss 1.5 elapsed 12:00:01 acc 0.5", {"step", "loss", "acc"}),
    ],
)
def test_the_clock_is_dropped_and_the_values_around_it_are_kept(line: str, want: set[str]) -> None:
    assert set(plan_for(line, FieldMap()).train) == want


@pytest.mark.parametrize(
    "line",
    [
        "[08/30 23:00:36] step: 5 loss: 1.0",
        "2024-01-01 12:00:00,123 step 5 loss 1.0",
        "12:00:01 INFO step 5 loss 1.0",
        "Mon Jan  1 12:00:00 2024 step 5 loss 1.0",
        "srun: error: CANCELLED AT 2021-05-24T09:50:34 step 5 loss 1.0",
        "step 5 loss 1.0 pciBusID 0000:00:08.0",
        "step 5 loss 1.0 ratio: 3:1",  # MM:SS is left alone: the form of a ratio
        "step 5 loss 1.0 split: 80:20",
        "step 5 loss 1.0 eta: 4:61:11",  # no clock: 61 minutes
        "step 5 loss 1.0 a: 1:00:00:00",  # no clock: four fields
        "done in 0:03:34 (0.4359 s / it) step 5 loss 1.0",  # no key before it
    ],
)
def test_times_of_day_and_other_colon_forms_are_read_as_before(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    now = line_keys(line)
    monkeypatch.setattr(textrules, "CLOCK", re.compile(r"(?!)"))  # the reader before clocks were dropped
    assert now == line_keys(line)


def test_a_ratio_still_reads_its_first_number() -> None:
    assert plan_for("step 5 loss 1.0 ratio: 3:1", FieldMap()).train["ratio"] == 2
