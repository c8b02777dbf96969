"""AverageMeter stdout (pytorch/examples ImageNet, torchvision MetricLogger, timm) and absl/clu lines,
each written with its writer's own format string; train and evaluation phases kept apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from tests.unit.blindcache import blind_log


def _imagenet(epochs: int, batches: int, upto: int | None = None) -> str:
    """pytorch/examples imagenet/main.py: ProgressMeter(prefix="Epoch: [{}]") (:321, :498), meters
    ``'{name} {val:fmt} ({avg:fmt})'`` (:472) joined by tabs; validate() uses prefix 'Test: '."""
    out = [f"Namespace(arch='resnet18', batch_size=256, epochs={epochs}, lr=0.1, workers=4)"]
    for ep in range(epochs):
        for i in range(0, batches, 100):
            if upto is not None and ep == epochs - 1 and i > upto:
                return "\n".join(out) + "\n"
            loss = 6.0 - ep - i / 1000
            out.append(
                "\t".join(
                    [
                        f"Epoch: [{ep}][{i:>3d}/{batches}]",
                        "Time  0.101 ( 0.200)",
                        "Data  0.010 ( 0.020)",
                        f"Loss {loss:.4e} ({loss + 0.1:.4e})",
                        "Acc@1   1.00 (  1.00)",
                        "Acc@5   5.00 (  5.00)",
                    ]
                )
            )
        for i in (0, 50):
            out.append(
                "\t".join(
                    [
                        f"Test: [{i:>3d}/100]",
                        "Time  0.050 ( 0.060)",
                        f"Loss {9.0:.4e} ({9.0:.4e})",
                        "Acc@1  10.00 ( 10.00)",
                    ]
                )
            )
        out.append(f" * Acc@1 {10 + ep:.3f} Acc@5 {30 + ep:.3f}")
    return "\n".join(out) + "\n"


def _metriclogger(epochs: int, batches: int) -> str:
    """torchvision references/classification/utils.py MetricLogger.log_every: header
    ``Epoch: [{epoch}]``, ``'[{0:Nd}/{1}]'``, ``eta: ...``, meters ``name: median (global_avg)``,
    joined by two spaces; the evaluation header ``Test:``."""
    out = []
    for ep in range(epochs):
        for i in range(0, batches, 100):
            loss = 4.0 - ep - i / 1000
            out.append(
                f"Epoch: [{ep}]  [{i:>3d}/{batches}]  eta: 0:00:53  lr: 0.1  loss: {loss:.4f} "
                f"({loss + 0.2:.4f})  acc1: 30.0000 (20.0000)  time: 0.2008  data: 0.0003  max mem: 1000"
            )
        out.append(f"Epoch: [{ep}] Total time: 0:01:06")
        out.append("Test:   [ 0/99]  eta: 0:03:15  loss: 8.5792 (8.5792)  acc1: 59.3750 (59.3750)  time: 1.9725")
        out.append("Test:  Total time: 0:00:19")
    return "\n".join(out) + "\n"


def _timm(epochs: int, updates: int) -> str:
    """timm train.py: ``Scheduled epochs: {num_epochs}`` and train_one_epoch's
    ``Train: {epoch} [{update_idx:>4d}/{updates_per_epoch} ({pct:>3.0f}%)]  Loss: {now:#.3g} ({avg:#.3g})``;
    validate()'s ``Test: [{batch_idx:>4d}/{last_idx}]  ...  Loss: {val:>7.3f} ({avg:>6.3f})``."""
    out = [f"Scheduled epochs: {epochs}. LR stepped per epoch."]
    for ep in range(epochs):
        for idx in [*range(0, updates, 50), updates - 1]:
            loss = 5.0 - ep - idx / 1000
            out.append(
                f"Train: {ep} [{idx:>4d}/{updates} ({100.0 * (idx + 1) / updates:>3.0f}%)]  "
                f"Loss: {loss:#.3g} ({loss + 0.1:#.3g})  Time: 0.123s, 1040.12/s  (0.130s,  985.00/s)  "
                f"LR: {1e-3:.3e}  Data: 0.010 (0.012)"
            )
        out.append(
            f"Test: [   0/19]  Time: 0.050 (0.060)  Loss: {7.0:>7.3f} ({7.0:>6.3f})  "
            f"Acc@1: {50.0:>7.3f} ({50.0:>7.3f})  Acc@5: {80.0:>7.3f} ({80.0:>7.3f})"
        )
    return "\n".join(out) + "\n"


def _load(tmp: Path, text: str, name: str = "train.log"):
    path = tmp / name
    path.write_text(text)
    return pipeline.load(str(path))


def test_imagenet_progress_meter_is_two_level_and_its_test_phase_is_evaluation(tmp_path: Path) -> None:
    run = _load(tmp_path, _imagenet(3, 500))
    st = run.meta.structure
    assert run.table["step"].to_list()[:6] == [0, 100, 200, 300, 400, 500]  # epoch 1 starts at 500
    assert run.table["loss"].max() < 8  # no Test line (loss 9) among the training rows
    assert run.evals["val_loss"].to_list() == [9.0] * 3  # one pass per epoch: its two progress lines are one
    assert (st.planned, st.planned_epochs, st.ending) == (1500, 3, "finished")


def test_a_meter_log_cut_in_its_last_epoch_is_stopped(tmp_path: Path) -> None:
    st = _load(tmp_path, _imagenet(3, 500, upto=200)).meta.structure
    assert (st.last_step, st.planned, st.ending) == (1200, 1500, "stopped")


def test_metriclogger_epoch_and_test_header(tmp_path: Path) -> None:
    run = _load(tmp_path, _metriclogger(2, 300))
    assert run.table["step"].to_list() == [0, 100, 200, 300, 400, 500]
    assert run.table["loss"].to_list()[:2] == [4.0, 3.9]  # the median, not the average in brackets
    assert run.evals["val_loss"].to_list() == [8.5792, 8.5792]


def test_timm_train_lines_and_scheduled_epochs(tmp_path: Path) -> None:
    run = _load(tmp_path, _timm(3, 200))
    st = run.meta.structure
    assert run.table["step"].to_list()[:5] == [0, 50, 100, 150, 199]
    assert run.table["step"][5] == 200  # epoch 1, update 0
    assert run.table["loss"].max() < 6 and run.evals["val_loss"].to_list() == [7.0] * 3
    assert st.planned_epochs == 3 and st.ending == "finished"


def test_timm_summary_csv(tmp_path: Path) -> None:
    """timm/utils/summary.py update_summary: ``epoch``, ``train_`` + train metrics, ``eval_`` + eval
    metrics, ``lr`` (train.py writes train_metrics {'loss'}, eval_metrics {'loss','top1','top5'})."""
    rows = ["epoch,train_loss,eval_loss,eval_top1,eval_top5,lr"]
    rows += [f"{e},{5 - e * 0.5},{4 - e * 0.4},{40 + e * 5},{70 + e * 3},0.001" for e in range(5)]
    run = _load(tmp_path, "\n".join(rows) + "\n", "summary.csv")
    assert run.table["loss"].to_list() == [5.0, 4.5, 4.0, 3.5, 3.0]
    assert run.evals["eval_top1"].to_list() == [40.0, 45.0, 50.0, 55.0, 60.0]


def test_keras_csvlogger(tmp_path: Path) -> None:
    """keras/src/callbacks/csv_logger.py: ``epoch`` then the logs' keys sorted (loss, val_loss...)."""
    rows = ["epoch,accuracy,loss,val_accuracy,val_loss"]
    rows += [f"{e},{0.5 + e / 20},{1.0 - e / 10},{0.5 + e / 30},{1.1 - e / 20}" for e in range(6)]
    run = _load(tmp_path, "\n".join(rows) + "\n", "training_log.csv")
    assert run.table["step"].to_list() == list(range(6)) and run.evals.height == 6


def _absl(msg: str, second: int) -> str:
    """absl/logging/__init__.py:831 ``'%c%02d%02d %02d:%02d:%02d.%06d %5d %s:%d] %s'``."""
    fmt = "I%02d%02d %02d:%02d:%02d.%06d %5d %s:%d] %s"  # the writer's own format, kept as it is
    return fmt % (12, 7, 12, 0, second % 60, 123456, 140071, "logging_writer.py", 48, msg)


def test_clu_logging_writer_lines_under_the_absl_prefix(tmp_path: Path) -> None:
    """clu/metric_writers/logging_writer.py write_scalars: ``"[%d]%s %s" % (step, collection, "k=v, ...")``."""
    lines = [_absl("Starting training loop at step 0.", 0)]
    for s in range(100, 600, 100):
        lines.append(_absl(f"[{s}] learning_rate=0.001, train_loss={3 - s / 1000:.6g}", s // 100))
        if s == 300:
            lines.append(_absl(f"[{s}] collection=eval accuracy=0.5, loss=2.75", s // 100))
    run = _load(tmp_path, "\n".join(lines) + "\n")
    assert run.table["step"].to_list() == [100, 200, 300, 400, 500]
    assert run.table["loss"].to_list() == pytest.approx([2.9, 2.8, 2.7, 2.6, 2.5])
    assert set(run.table.columns) <= {"step", "loss", "line_no", "lr"}  # no column from the prefix
    assert run.evals["val_loss"].to_list() == [2.75]


def test_glog_prefixed_keyed_lines(tmp_path: Path) -> None:
    lines = [_absl(f"step {s} loss={3 - s / 1000:.4f} lr=0.001", s // 100) for s in range(100, 600, 100)]
    run = _load(tmp_path, "\n".join(lines) + "\n")
    assert run.table["step"].to_list() == [100, 200, 300, 400, 500]
    assert "i1207" not in run.table.columns


@pytest.mark.parametrize(
    ("name", "rows", "planned", "ending"),
    [
        ("averagemeter_imagenet_example_food101_dp.md", 60, 5900, "finished"),
        ("averagemeter_metriclogger_food101_ddp_apex_overflow.md", 60, 5900, "finished"),
    ],
)
def test_real_meter_logs(name: str, rows: int, planned: int, ending: str) -> None:
    run = pipeline.load(str(blind_log(name)))
    st = run.meta.structure
    assert (st.rows, st.planned, st.ending) == (rows, planned, ending)
    assert run.evals.height >= 20  # the Validate: phase, never training rows


def test_a_unit_in_brackets_is_no_step_key(tmp_path: Path) -> None:
    """deepspeech.pytorch prints a per-epoch summary beside its AverageMeter line: ``Time taken (s): 3``
    names seconds, never the step (``s:`` is llm.c's step key)."""
    lines = []
    for ep in range(1, 7):
        lines.append(
            f"train.py[line:227] INFO Epoch: [{ep}][1/1]\tTime 2.885 (2.885)\tData 0.000 (0.000)\t"
            f"Loss {2000 - 100 * ep:.4f} ({2000 - 50 * ep:.4f})\t"
        )
        lines.append(
            f"train.py[line:236] INFO Training Summary Epoch: [{ep}]\tTime taken (s): 3\t"
            f"Average Loss {2000 - 100 * ep:.3f}\t"
        )
    run = _load(tmp_path, "\n".join(lines) + "\n")
    assert run.table["step"].to_list() == [1, 2, 3, 4, 5, 6]
    assert run.table["loss"].to_list() == [1900.0, 1800.0, 1700.0, 1600.0, 1500.0, 1400.0]
