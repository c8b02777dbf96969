"""A crash logged before the trainer's exit hook writes its last row (detectron2's ``TrainerBase.train``:
``logger.exception("Exception during training:")``, then ``finally: self.after_train()`` flushes the
pending metrics): the launch crashed, the row after the traceback does not hide it."""

from __future__ import annotations

from pathlib import Path

from logdoctor import pipeline
from logdoctor.model import Report, Severity

TRACEBACK = [
    "[08/30 16:32:10] d2.engine.train_loop ERROR: Exception during training:",
    "Traceback (most recent call last):",
    '  File "/src/detectron2/engine/train_loop.py", line 156, in train',
    "    self.after_step()",
    '  File "/src/detectron2/data/build.py", line 264, in get_detection_dataset_dicts',
    "    assert len(dicts), \"Dataset '{}' is empty!\".format(dataset_name)",
    "AssertionError: Dataset 'coco_val' is empty!",
    "[08/30 16:32:10] d2.engine.hooks INFO: Overall training speed: 4997 iterations in 0:35:51 (0.4305 s / it)",
]


def _row(it: int) -> str:
    return (
        f"[08/30 16:30:35] d2.utils.events INFO:  eta: 0:23:03  iter: {it}  total_loss: {3 - it / 2500:.4f}  lr: 0.0001"
    )


def _report(tmp_path: Path, lines: list[str]) -> Report:
    path = tmp_path / "log.txt"
    path.write_text("\n".join(["[08/30 15:56:00] d2.engine.defaults INFO: MAX_ITER: 8000", *lines]) + "\n")
    return pipeline.analyze(pipeline.load(str(path)))


def test_a_traceback_before_the_flushed_last_row_ended_the_launch(tmp_path: Path) -> None:
    rows = [_row(k) for k in range(19, 4980, 20)]
    report = _report(tmp_path, [*rows, *TRACEBACK, _row(4999)])
    st = report.meta.structure
    assert st is not None and st.ending == "crashed" and st.failure is not None
    (f,) = [f for f in report.findings if f.code == "LD010"]
    assert f.severity is Severity.ERROR and "Dataset 'coco_val' is empty!" in f.message
    assert not [f for f in report.findings if f.code == "LD016"]


def test_a_traceback_followed_by_more_training_was_caught(tmp_path: Path) -> None:
    """Training went on for several rows after it: the program caught it, the run did not end there."""
    rows = [_row(k) for k in range(19, 4980, 20)]
    report = _report(tmp_path, [*rows, *TRACEBACK, *[_row(k) for k in range(4999, 5100, 20)]])
    st = report.meta.structure
    assert st is not None and st.ending != "crashed" and st.failure is None
    assert not [f for f in report.findings if f.code == "LD010"]


def test_a_last_row_far_past_the_traceback_is_not_a_flush(tmp_path: Path) -> None:
    """One more row, but many logging intervals on: not the pending row of the step that failed."""
    rows = [_row(k) for k in range(19, 4980, 20)]
    report = _report(tmp_path, [*rows, *TRACEBACK, _row(7999)])
    st = report.meta.structure
    assert st is not None and st.failure is None
