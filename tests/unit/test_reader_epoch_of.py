"""The epoch of the planned epochs in brackets, ``Epoch [e/N]``: the plain PyTorch loops written after
yunjey/pytorch-tutorial (``'Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}'.format(epoch+1, num_epochs, i+1,
total_step, loss.item())``, ``total_step = len(train_loader)``) and their one-line-per-epoch variants
(``Epoch [3/50], Train Loss: ..., Val Loss: ...``), written here with those format strings."""

from __future__ import annotations

from pathlib import Path

from logdoctor import pipeline

_T = "2025-04-24 21:17:53,828 - INFO - "


def _tutorial(epochs: int, ran: int, batches: int = 600, every: int = 100) -> str:
    out = []
    for e in range(ran):
        for i in range(every, batches + 1, every):
            loss = 2.0 / (1 + e + i / batches) + 0.1
            out.append(f"Epoch [{e + 1}/{epochs}], Step [{i}/{batches}], Loss: {loss:.4f}")
    return "\n".join(out) + "\n"


def _per_epoch(epochs: int, ran: int, start: int = 1) -> list[str]:
    return [
        f"{_T}Epoch [{e:03d}/{epochs}], Train Loss: {1.9 / e:.4f}, Train Acc: {20 + e:.2f}%, "
        f"Val Loss: {1.9 / e + 0.2:.4f}, Val Acc: {17 + e:.2f}%"
        for e in range(start, ran + 1)
    ]


def _load(tmp: Path, text: str) -> pipeline.Run:
    path = tmp / "train.log"
    path.write_text(text)
    return pipeline.load(str(path))


def test_the_tutorial_step_is_derived_from_the_epoch_and_its_batch(tmp_path: Path) -> None:
    run = _load(tmp_path, _tutorial(5, 5))
    st = run.meta.structure
    assert run.table["step"].to_list()[:7] == [100, 200, 300, 400, 500, 600, 700]  # epoch 2, batch 100: 700
    assert (st.planned_epochs, st.ending) == (5, "finished")
    assert run.meta.steps_per_epoch == 600


def test_the_tutorial_stopped_before_its_epochs_is_a_stop(tmp_path: Path) -> None:
    st = _load(tmp_path, _tutorial(10, 4)).meta.structure
    assert (st.planned_epochs, st.ending) == (10, "stopped")


def test_one_line_per_epoch_reads_the_epoch_and_the_plan(tmp_path: Path) -> None:
    run = _load(tmp_path, "\n".join(_per_epoch(50, 50)) + "\n")
    st = run.meta.structure
    assert run.table["step"].to_list() == list(range(1, 51))
    assert (st.planned_epochs, st.ending) == (50, "finished")
    assert pipeline.analyze(run).status == "ok"


def test_a_launch_counting_from_epoch_one_again_is_another_launch(tmp_path: Path) -> None:
    """Three launches appended to one file: each is its own run (their loss curves are not one run's
    spikes), and the last stopped at epoch 11 of 50 with no message."""
    run = _load(tmp_path, "\n".join([*_per_epoch(50, 8), *_per_epoch(50, 5), *_per_epoch(50, 11)]) + "\n")
    report = pipeline.analyze(run)
    codes = {f.code for f in report.findings}
    assert {"LD018", "LD016"} <= codes and "LD101" not in codes
    assert (run.meta.structure.rows, run.table.height) == (24, 11)


def test_a_resume_from_an_earlier_epoch_overwrites_its_epochs(tmp_path: Path) -> None:
    """Epochs 1-25, then the program started again from the checkpoint of epoch 20 (a resume line
    between): epochs 21-30 replace 21-25, the run is 30 epochs long, not 35 rows in a row, whatever
    checkpoint line follows the rows (numbered by record order, a resume line would cut them into runs)."""
    first = _per_epoch(30, 25)
    resumed = _per_epoch(30, 30, start=21)
    load = [f"{_T}[Checkpoint] Loaded <- results/models/best_model.pth (epoch=20)"]
    test = f"{_T}[Pipeline] Loading best checkpoint: best_model.pth"  # after training: the test phase's
    run = _load(tmp_path, "\n".join([*first, *load, *resumed, test]) + "\n")
    st = run.meta.structure
    assert run.table["step"].to_list() == list(range(1, 31))
    assert (st.planned_epochs, st.ending, len(st.restarts)) == (30, "finished", 1)
