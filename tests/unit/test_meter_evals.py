"""An AverageMeter evaluation pass (timm's ``Test: [i/N]`` progress lines) is one evaluation record at its
last line's running averages; passes, phases and lines without a running average stay apart."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from logdoctor import pipeline
from logdoctor.ingest.parsers.metereval import fold_meter_evals


def _test_line(idx: int, last: int, loss: float, avg: float, acc: float, acc_avg: float, phase: str = "Test") -> str:
    """timm train.py validate(): ``{log_name}: [{batch_idx:>4d}/{last_idx}]  Time: ...  Loss: {val:>7.3f}
    ({avg:>6.3f})  Acc@1: {val:>7.3f} ({avg:>7.3f})  Acc@5: ...``."""
    return (
        f"{phase}: [{idx:>4d}/{last}]  Time: 0.005 (0.004)  Loss: {loss:>7.3f} ({avg:>6.3f})  "
        f"Acc@1: {acc:>7.3f} ({acc_avg:>7.3f})  Acc@5: 100.000 (100.000)"
    )


def _fold(lines: list[str]) -> tuple[list[str], int]:
    frame, folded = fold_meter_evals(pl.DataFrame({"msg": lines}), "msg")
    return frame["msg"].to_list(), folded


def test_a_pass_is_its_last_line_at_its_running_averages() -> None:
    out, folded = _fold([_test_line(0, 2, 1.092, 1.092, 0.0, 0.0), _test_line(2, 2, 1.152, 1.095, 0.0, 33.333)])
    assert folded == 1 and out[0] == ""
    assert " ".join(out[1].split()).endswith("Loss: 1.095 Acc@1: 33.333 Acc@5: 100.000")


def test_passes_that_print_one_line_each_stay_two_evaluations() -> None:
    """A new pass starts at a lower batch index: two ``[0/N]`` lines are two passes, never one."""
    out, folded = _fold([_test_line(0, 9, 2.0, 2.0, 10.0, 10.0), _test_line(0, 9, 1.5, 1.5, 20.0, 20.0)])
    assert folded == 0 and all(out)


def test_the_ema_pass_is_its_own_evaluation() -> None:
    lines = [_test_line(0, 1, 1.0, 1.0, 50.0, 50.0), _test_line(0, 1, 0.9, 0.9, 60.0, 60.0, "Test (EMA)")]
    out, folded = _fold(lines)
    assert folded == 0 and [" ".join(line.split()).split("Acc")[0] for line in out] == [
        "Test: [ 0/1] Time: 0.004 Loss: 1.000 ",
        "Test (EMA): [ 0/1] Time: 0.004 Loss: 0.900 ",
    ]


def test_a_test_line_without_a_running_average_is_left_alone() -> None:
    lines = ["Test: [3/10] loss 1.2 acc 50.0", "Test: [4/10] loss 1.1 acc 55.0"]
    assert _fold(lines) == (lines, 0)


def test_a_timm_log_has_one_evaluation_per_epoch_at_its_pass_average(tmp_path: Path) -> None:
    out = ["Scheduled epochs: 2 (epochs + cooldown_epochs). LR stepped per epoch."]
    for ep in range(2):
        for idx in range(4):
            out.append(
                f"Train: {ep} [{idx:>4d}/4 ({100.0 * (idx + 1) / 4:>3.0f}%)]  Loss: {1.5 - ep:#.3g} ({1.5 - ep:#.3g})  "
                "Time: 0.010s,  800.00/s  (0.010s,  800.00/s)  LR: 1.000e-03  Data: 0.002 (0.002)"
            )
        out += [
            _test_line(0, 1, 1.0 - ep, 1.0 - ep, 0.0, 0.0),
            _test_line(1, 1, 0.5 - ep / 4, 0.75 - ep / 4, 100.0, 50.0),
        ]
    path = tmp_path / "train.log"
    path.write_text("\n".join(out) + "\n")
    run = pipeline.load(str(path))
    assert run.evals["val_loss"].to_list() == [0.75, 0.5]
    assert run.evals["val_acc"].to_list() == [50.0, 50.0]
    assert run.evals["step"].to_list() == [3, 7]
