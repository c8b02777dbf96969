"""Logs of several launches (LD018): fresh launches appended in one log are listed, each with its
lines, steps and ending; healthy one-launch logs whose counters repeat or restart by design stay silent."""

from __future__ import annotations

import json
from pathlib import Path

from logdoctor import pipeline
from logdoctor.model import Report, Severity


def _report(tmp_path: Path, lines: list[str], name: str = "train.log") -> Report:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return pipeline.analyze(pipeline.load(str(path)))


def _launch(last: int, every: int = 20, level: float = 3.0) -> list[str]:
    return [
        f"iter: {k}  total_loss: {level - k / (2 * last):.4f}  lr: 0.0001" for k in range(every - 1, last + 1, every)
    ]


def _ld018(report: Report) -> list:
    return [f for f in report.findings if f.code == "LD018"]


def test_launches_appended_in_a_text_log_are_listed(tmp_path: Path) -> None:
    lines = ["starting training", *_launch(399), "starting training", *_launch(199), "starting training", *_launch(999)]
    report = _report(tmp_path, lines)
    (f,) = _ld018(report)
    assert f.severity is Severity.INFO and report.status == "ok"  # a relaunch by itself is no fault
    assert f.evidence["launches"] == 3
    # rows, not lines (the same records handed over in memory say the same); the last launch's line is the finding's
    assert "launch 1 (20 rows)" in f.message and "launch 2 (10 rows)" in f.message
    assert f.evidence["launch_rows"] == "20,10,50" and f.line == 34
    assert "this report is launch 3's" in f.message
    for part in report.earlier_runs:  # an earlier launch's own analysis does not list the launches again
        assert "LD018" not in {x.code for x in part.findings}


def test_a_metrics_file_whose_iteration_starts_again_holds_several_launches(tmp_path: Path) -> None:
    """detectron2's JSONWriter appends to metrics.json: the iteration back at the file's first is a new launch."""
    rows = [{"iteration": k, "total_loss": 3 - k / 800, "lr": 1e-4} for k in range(19, 400, 20)]
    rows += [{"iteration": k, "total_loss": 3 - k / 800, "lr": 1e-4} for k in range(19, 800, 20)]
    report = _report(tmp_path, [json.dumps(r) for r in rows], "metrics.json")
    (f,) = _ld018(report)
    assert f.evidence["launches"] == 2 and f.line == 21


def test_a_resume_from_a_checkpoint_is_not_a_new_launch(tmp_path: Path) -> None:
    """The counter back to a checkpoint's step, not to where the log began: one launch resumed (LD003)."""
    lines = [*_launch(999), *_launch(1599)[25:]]
    report = _report(tmp_path, lines)
    assert not _ld018(report)
    assert "LD003" in {f.code for f in report.findings}


def test_per_epoch_iteration_counters_and_epoch_summaries_are_one_launch(tmp_path: Path) -> None:
    """``Epoch: [e][i/N]`` restarts ``i`` every epoch; an epoch-summary line repeats the last step; an
    evaluation row between epochs: one healthy launch, nothing listed."""
    lines = []
    for epoch in range(6):
        for i in range(0, 500, 50):
            loss = 2.5 * 0.8**epoch - i / 5000
            lines.append(f"Epoch: [{epoch}][{i}/500]  Loss {loss:.4f} ({loss + 0.01:.4f})  lr 0.01")
        lines.append(f"Epoch: [{epoch}] Test: Acc@1 {50 + 5 * epoch:.2f} Loss {2.0 * 0.9**epoch:.4f}")
    report = _report(tmp_path, lines)
    assert not _ld018(report)
    assert report.status == "ok"


def test_step_logs_with_an_epoch_summary_repeating_the_last_step_are_one_launch(tmp_path: Path) -> None:
    lines = []
    for epoch in range(1, 6):
        for k in range(100 * (epoch - 1) + 10, 100 * epoch + 1, 10):
            lines.append(f"epoch {epoch} step {k} loss {3 - k / 300:.4f}")
        lines.append(f"epoch {epoch} step {100 * epoch} loss {3 - 100 * epoch / 300:.4f} (epoch average)")
    report = _report(tmp_path, lines)
    assert not _ld018(report)
    assert not [f for f in report.findings if f.code in ("LD003", "LD005")]


def _mmdet(epochs: list[int]) -> list[str]:
    rows = []
    for epoch in epochs:
        for it in range(50, 751, 50):
            loss = 1.5 - 0.3 * epoch - it / 3000
            rows.append({"mode": "train", "epoch": epoch, "iter": it, "lr": 0.02, "loss": loss})
    return [json.dumps(r) for r in rows]


def test_one_epoch_change_of_a_per_epoch_counter_is_one_launch(tmp_path: Path) -> None:
    """Two epochs of an mmdet ``log.json`` (``iter`` counts within the epoch): the next epoch's
    counter starts again, one launch whose steps go on (epoch 2 iter 50 is step 800)."""
    report = _report(tmp_path, _mmdet([1, 2]), "run.log.json")
    assert not _ld018(report) and len(report.runs) == 0
    st = report.meta.structure
    assert st is not None and (st.first_step, st.last_step) == (50, 1500)


def test_a_launch_started_again_at_the_first_epoch_is_a_new_launch(tmp_path: Path) -> None:
    """The same counter back at the log's first epoch is not the next epoch: a fresh launch."""
    report = _report(tmp_path, _mmdet([1]) + _mmdet([1, 2]), "run.log.json")
    (f,) = _ld018(report)
    assert f.evidence["launches"] == 2


def test_a_counter_from_zero_counts_one_more_step_per_epoch(tmp_path: Path) -> None:
    """``Step 0/651`` ... ``Step 650/651`` every 10 steps, two epochs: epoch 1's step 0 is step 651,
    not a second write of epoch 0's last step (no resume, no second launch)."""
    lines = [
        f"Epoch {e} | Step {s:4d}/651 | Loss: {3 - e - s / 700:.4f} | LR: 1e-4"
        for e in range(2)
        for s in range(0, 651, 10)
    ]
    report = _report(tmp_path, lines)
    assert not [f for f in report.findings if f.code in ("LD003", "LD005", "LD018")]
    st = report.meta.structure
    assert st is not None and st.last_step == 651 + 650


def test_a_metrics_file_resumed_at_a_checkpoint_is_one_launch_resumed(tmp_path: Path) -> None:
    """The iteration back to a checkpoint's (4999 after 6219), not to the file's first: a resume (LD003)."""
    rows = [{"iteration": k, "total_loss": 3 - k / 8000, "lr": 1e-4} for k in range(19, 6220, 20)]
    rows += [{"iteration": k, "total_loss": 3 - k / 8000, "lr": 1e-4} for k in range(4999, 9000, 20)]
    report = _report(tmp_path, [json.dumps(r) for r in rows], "metrics.json")
    assert not _ld018(report)
    (f,) = [f for f in report.findings if f.code == "LD003"]
    assert f.evidence["resumes"] == 1
