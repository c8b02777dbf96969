"""A run whose rows are placed by a per-epoch batch counter (``Epoch [24][4700/7330]``) is judged by how
much of its last epoch it did: a label naming the plan's last epoch is no proof that epoch finished."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.model import Report, Severity


def _mmdet(tmp_path: Path, plan_line: str, last_epoch: int, last_iter: int, after: tuple[str, ...] = ()) -> Report:
    rng = np.random.default_rng(0)
    lines = ["2021-01-01 00:00:00,000 - mmdet - INFO - Config:", plan_line]
    k = 0
    for e in range(1, last_epoch + 1):
        for i in range(50, 201, 50):
            if e == last_epoch and i > last_iter:
                break
            k += 1
            loss = 1.5 * np.exp(-k / 10) + 0.4 + rng.normal(0, 0.02)
            lines.append(
                f"2021-01-01 00:00:00,000 - mmdet - INFO - Epoch [{e}][{i}/200]\tlr: 2.000e-02, eta: 1:00:00, "
                f"time: 0.500, data_time: 0.010, memory: 3000, loss_cls: {loss / 2:.4f}, loss: {loss:.4f}"
            )
    p = tmp_path / "train.log"
    p.write_text("\n".join([*lines, *after]) + "\n")
    return pipeline.analyze(pipeline.load(str(p)))


def _ld010(report: Report) -> Severity:
    return next(f.severity for f in report.findings if f.code == "LD010")


@pytest.mark.parametrize("epochs", [1, 12])
def test_killed_inside_the_plans_last_epoch_is_an_error(tmp_path: Path, epochs: int) -> None:
    # the label names the plan's last epoch, but the row [E][100/200] says it was left half done
    report = _mmdet(tmp_path, f"total_epochs = {epochs}", epochs, 100, ("Killed",))
    st = report.run.meta.structure
    assert st is not None and st.ending == "crashed" and st.epoch_unfinished
    assert _ld010(report) is Severity.ERROR


@pytest.mark.parametrize("epochs", [1, 12])
def test_killed_after_the_plans_last_epoch_ended_is_info(tmp_path: Path, epochs: int) -> None:
    # must not: [E][200/200] completed the plan; a kill while saving after it costs no training
    report = _mmdet(tmp_path, f"total_epochs = {epochs}", epochs, 200, ("Killed",))
    assert report.run.meta.structure is not None and not report.run.meta.structure.epoch_unfinished
    assert _ld010(report) is Severity.INFO


def test_killed_before_the_plans_last_epoch_is_an_error(tmp_path: Path) -> None:
    assert _ld010(_mmdet(tmp_path, "total_epochs = 12", 7, 200, ("Killed",))) is Severity.ERROR


@pytest.mark.parametrize("plan_line", ["total_epochs = 12", "runner = dict(type='EpochBasedRunner', max_epochs=12)"])
def test_stopped_inside_the_plans_last_epoch(tmp_path: Path, plan_line: str) -> None:
    st = _mmdet(tmp_path, plan_line, 12, 100).run.meta.structure
    assert st is not None and st.planned_epochs == 12
    assert st.ending == "stopped", (st.ending, st.ending_source, st.last_epoch)


@pytest.mark.parametrize("plan_line", ["total_epochs = 12", "runner = dict(type='EpochBasedRunner', max_epochs=12)"])
def test_the_plans_last_epoch_done_is_finished(tmp_path: Path, plan_line: str) -> None:
    # must not: the last row at [12][200/200] finished the run
    st = _mmdet(tmp_path, plan_line, 12, 200).run.meta.structure
    assert st is not None and st.ending == "finished", (st.ending, st.ending_source, st.last_epoch)


def _custom_loop(tmp_path: Path, header: list[str], epochs_run: int) -> Report:
    """A custom loop that prints ``Epoch e | Step s/N``: its counter restarts every epoch and N is
    one epoch's length (a public GPT-2 LoRA loop prints exactly this)."""
    lines = [*header]
    k = 0
    for e in range(epochs_run):
        for s in range(0, 400, 10):
            k += 1
            loss = 2.0 * np.exp(-k / 30) + 0.5
            lines.append(
                f"INFO:__main__:Epoch {e} | Step {s:4d}/400 | Loss: {loss:.4f} | PPL: {np.exp(loss):.2f} | "
                f"LR: 1.50e-04 | Grad: 0.300 | Time: 0.520s"
            )
        lines.append(f"INFO:__main__:Epoch {e} completed in 4729.23s | Avg Loss: {loss:.4f}")
    p = tmp_path / "train.log"
    p.write_text("\n".join(lines) + "\n")
    return pipeline.analyze(pipeline.load(str(p)))


def test_a_per_epoch_counters_total_is_one_epoch_not_the_run(tmp_path: Path) -> None:
    """Without planned epochs the run's plan is unknown: never "400 planned, reached 799"."""
    st = _custom_loop(tmp_path, [], 2).run.meta.structure
    assert st is not None and st.planned is None, (st.planned, st.planned_source)


@pytest.mark.parametrize(("epochs_run", "ending"), [(3, "finished"), (2, "stopped")])
def test_a_per_epoch_counters_total_times_the_planned_epochs_is_the_plan(
    tmp_path: Path, epochs_run: int, ending: str
) -> None:
    st = _custom_loop(tmp_path, ["INFO:__main__:  epochs: 3"], epochs_run).run.meta.structure
    assert st is not None and st.planned == 1200, (st.planned, st.planned_source)
    assert st.ending == ending, (st.ending, st.ending_source)


def test_a_resumed_log_numbered_by_record_order_has_no_planned_step(tmp_path: Path) -> None:
    """icefall resumed at epoch 20 of 30: its rows are numbered 1, 2, ... from the resume, so 30 epochs x
    4 rows is no step they reach (it read "finished ... planned 120 steps, reached 44"); the ending is the
    epochs' (30 of 30)."""
    lines = ["2023-08-25 19:14:22,598 INFO [train.py:977] (0/1) {'num_epochs': 30, 'start_epoch': 20}"]
    k = 0
    for epoch in range(20, 31):
        for batch in range(0, 200, 50):
            k += 1
            loss = 0.5 + 0.3 * np.exp(-k / 20)
            lines.append(
                f"2023-08-25 19:15:{k % 60:02d},598 INFO [train.py:878] (0/1) Epoch {epoch}, batch {batch}, "
                f"loss[loss={loss:.4g}, over 18286.00 frames. ], tot_loss[loss={loss:.4g}, over 791542.98 frames. ], "
                "batch size: 89, lr: 2.93e-03"
            )
    p = tmp_path / "train.log"
    p.write_text("\n".join(lines) + "\n")
    st = pipeline.analyze(pipeline.load(str(p))).run.meta.structure
    assert st is not None and st.planned is None, (st.planned, st.planned_source)
    assert st.planned_epochs == 30 and st.ending == "finished", (st.planned_epochs, st.ending, st.ending_source)
