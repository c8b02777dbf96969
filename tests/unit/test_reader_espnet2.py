"""ESPnet2's train.log, in the exact form its reporter writes (espnet/espnet ``espnet2/train/reporter.py``
at 01d307c: SubReporter.log_message ``f"{epoch}epoch:{key}:{prev_count + 1}-{count}batch: "`` then
``key=value`` joined by ``, ``; Reporter.log_message ``f"{epoch}epoch results: "`` then ``[key] k=v, ...``
per split), behind ESPnet's logging prefix ``[host] date (module:line) INFO: ``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import Report

PREFIX = "[host1] 2023-05-01 10:00:00,000"


def _log(tmp_path: Path, epochs: int = 5, val_rise: bool = False, last: str = "") -> Report:
    lines = [f"{PREFIX} (asr:1123) INFO: pytorch.version=1.13.1, cuda.available=True"]
    k = 0
    for e in range(1, epochs + 1):
        for b in range(0, 1000, 100):
            k += 1
            loss = 120 * math.exp(-k / 15) + 20 + 0.5 * math.sin(k)
            lines.append(
                f"{PREFIX} (trainer:732) INFO: {e}epoch:train:{b + 1}-{b + 100}batch: iter_time=1.234e-04, "
                f"forward_time=0.123, loss_ctc={loss * 1.3:.3f}, loss_att={loss * 0.8:.3f}, "
                f"acc={min(0.9, 0.1 + k / 60):.3f}, loss={loss:.3f}, backward_time=0.101, optim_step_time=0.020, "
                "optim0_lr0=1.000e-03, train_time=0.456"
            )
        val = loss * 1.1 * (1 + 0.15 * max(0, e - 4) if val_rise else 1)
        lines.append(
            f"{PREFIX} (trainer:338) INFO: {e}epoch results: [train] iter_time=1.2e-04, loss={loss:.3f}, "
            f"time=5 minutes and 3.2 seconds, total_count={e * 1000}, [valid] loss_ctc={val * 1.3:.3f}, "
            f"acc={min(0.85, 0.1 + k / 70):.3f}, loss={val:.3f}, time=20.1 seconds, total_count={e * 100}, "
            "[att_plot] time=3.2 seconds, total_count=0"
        )
    lines.append(f"{PREFIX} (trainer:435) INFO: {last or f'The training was finished at {epochs} epochs '}")
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    return pipeline.analyze(pipeline.load(str(path)))


def test_batch_lines_are_steps_within_epochs_and_results_are_evaluations(tmp_path: Path) -> None:
    report = _log(tmp_path)
    run = report.run
    st = run.meta.structure
    assert run.table.height == 50 and st is not None and st.epochs == 5  # the summaries are no training rows
    assert run.table["step"].to_list()[:2] == [100, 200] and run.table["step"].max() == 5000
    assert "lr" in run.table.columns  # optim0_lr0
    assert run.evals.height == 5 and "val_loss" in run.evals.columns and "val_acc" in run.evals.columns
    assert report.status == "ok" and st.ending == "finished"


def test_an_early_stop_line_ends_the_run_early_stopped(tmp_path: Path) -> None:
    last = "[Early stopping] valid.acc has not been improved 3 epochs continuously. The training was stopped at 5epoch"
    st = _log(tmp_path, last=last).run.meta.structure
    assert st is not None and st.ending == "early_stopped"


@pytest.mark.parametrize("epochs", [12])
def test_a_validation_loss_that_rises_while_training_falls_is_found(tmp_path: Path, epochs: int) -> None:
    report = _log(tmp_path, epochs=epochs, val_rise=True)
    assert "LD410" in {f.code for f in report.findings}, [(f.code, f.message[:80]) for f in report.findings]
