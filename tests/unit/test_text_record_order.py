"""Logs without step numbers: rows are numbered in record order, from 1 again for each fresh run."""

from __future__ import annotations

from pathlib import Path

from logdoctor import pipeline
from logdoctor.model import Run


def _two_runs(tmp_path: Path) -> Path:
    # one line per epoch, no step counter; a second model's run appended after a markdown heading
    first = "".join(f"Epoch {e:03d} loss {2.0 - 0.05 * e:.4f} | train 2.1s\n" for e in range(1, 31))
    second = "".join(f"Epoch {e:03d} loss {900.0 - 10 * e:.4f} | train 5.2s\n" for e in range(1, 41))
    path = tmp_path / "runs.md"
    path.write_text("## model a\n```\n" + first + "```\n\n## model b\n```\n" + second + "```\n")
    return path


def test_epoch_back_to_the_first_starts_a_fresh_run_not_a_resume(tmp_path: Path) -> None:
    run = pipeline.load(str(_two_runs(tmp_path)))
    kinds = [r.kind for r in run.meta.structure.restarts]
    assert kinds == ["appended_run"]
    # the report is the last run alone: its 40 rows, numbered from 1, never joined to the first run's
    assert run.table.height == 40
    assert run.table["step"].to_list() == list(range(1, 41))
    assert run.table["loss"][0] == 890.0
    assert len(run.earlier) == 1 and run.earlier[0].table.height == 30


def test_a_run_alone_keeps_its_numbering(tmp_path: Path) -> None:
    path = tmp_path / "one.log"
    path.write_text("".join(f"Epoch {e:03d} loss {2.0 - 0.05 * e:.4f}\n" for e in range(1, 31)))
    run = pipeline.load(str(path))
    assert run.table["step"].to_list() == list(range(1, 31))
    assert run.meta.structure.restarts == ()


def test_a_run_continued_from_an_earlier_epoch_is_a_resume_whose_later_writes_win(tmp_path: Path) -> None:
    # simple-nmt style: a 30-epoch run, then training continued from the epoch-20 checkpoint
    first = "".join(f"Epoch {e} - |param|=6.0e+02 loss={3.0 - 0.05 * e:.4e} ppl=9.9\n" for e in range(1, 31))
    again = "".join(f"Epoch {e} - |param|=6.1e+02 loss={2.5 - 0.01 * e:.4e} ppl=9.9\n" for e in range(21, 41))
    path = tmp_path / "continued.log"
    path.write_text(first + "Adam (\n    lr: 0.001\n)\n" + again)
    run = pipeline.load(str(path))
    assert [(r.step, r.kind) for r in run.meta.structure.restarts] == [(21, "counter_reset")]
    assert run.table["step"].to_list() == list(range(1, 41))
    assert run.table.filter(run.table["step"] == 25)["loss"].item() == 2.25


def test_an_epoch_written_twice_in_a_row_is_a_restart_not_two_records_of_one_epoch(tmp_path: Path) -> None:
    # the last epoch run once more from its checkpoint: the second write of epoch 30 wins
    lines = "".join(f"Epoch {e} - loss={3.0 - 0.05 * e:.4e} ppl=9.9\n" for e in range(1, 31))
    path = tmp_path / "rerun.log"
    path.write_text(lines + "Adam (\n)\nEpoch 30 - loss=1.9000e+00 ppl=6.7\n")
    run = pipeline.load(str(path))
    assert run.table["step"].to_list() == list(range(1, 31))
    assert run.table["loss"][-1] == 1.9


def test_several_records_per_epoch_keep_record_order(tmp_path: Path) -> None:
    text = "".join(f"Epoch {e} - Batch loss: {3.0 - 0.01 * i:.3f}\n" for e in range(1, 4) for i in range(10))
    path = tmp_path / "batches.log"
    path.write_text(text)
    run = pipeline.load(str(path))
    assert run.table["step"].to_list() == list(range(1, 31))


def _reruns(tmp_path: Path, parts: list[range]) -> Run:
    """An epoch-counted log of reruns, each an excerpt of the epochs in its part, after an optimizer dump."""
    text = "".join(
        "Adam (\n)\n" + "".join(f"Epoch {e} - loss={3.0 - 0.01 * e + 0.01 * k:.4e} ppl=9.9\n" for e in part)
        for k, part in enumerate(parts)
    )
    path = tmp_path / "reruns.log"
    path.write_text(text)
    return pipeline.load(str(path))


def test_short_reruns_of_an_epoch_log_are_restarts_not_interleaved_writers(tmp_path: Path) -> None:
    # excerpts of several reruns, some a single epoch long: each is a restart, none another rank
    parts = [range(1, 101), range(100, 101), range(100, 101), range(100, 101), range(95, 121), range(120, 121)]
    run = _reruns(tmp_path, parts)
    assert run.meta.nonmonotonic_steps == 0
    assert [r.kind for r in run.meta.structure.restarts] == ["counter_reset"] * 5
    assert run.table["step"].to_list() == list(range(1, 121))


def test_one_short_rerun_among_long_restarts_is_no_nonmonotonic_record(tmp_path: Path) -> None:
    parts = [range(1, 101), range(100, 101), range(90, 131), range(120, 161)]
    run = _reruns(tmp_path, parts)
    assert run.meta.nonmonotonic_steps == 0
    assert len(run.meta.structure.restarts) == 3
    assert "each record is one epoch" in " ".join(run.meta.notes)


def test_a_line_with_the_training_loss_before_a_val_mark_is_a_training_row(tmp_path: Path) -> None:
    # one line per epoch: the train values first, then "| Val Loss: ..." (a plain PyTorch loop)
    text = "".join(
        f"Epoch {e} |     Train Loss: {11.0 - 0.05 * e:.4f} | Token Acc: 0.0{50 + e % 9} | Seq Acc: 0.0000 |"
        f"     Val Loss: {10.9 - 0.04 * e:.4f} | Token Acc: 0.0{60 + e % 7} | Seq Acc: 0.0000\n"
        for e in range(40)
    )
    path = tmp_path / "train.log"
    path.write_text("start training...\n" + text)
    run = pipeline.load(str(path))
    assert run.table.height == 40
    assert run.table["loss"][0] == 11.0 and run.table["step"][0] == 0
    assert run.table["acc"][0] == 0.05


def test_short_appended_runs_of_one_epoch_each_are_runs_of_their_own(tmp_path: Path) -> None:
    # textsegment-like: a one-epoch run, a four-epoch run, then two one-epoch runs, one line each
    epochs = [1, 1, 2, 3, 4, 1, 1]
    line = "2020-11-08 16:35:15,207 - DEBUG - Training Epoch: {e}, Loss: {loss:.4f}.\n"
    text = "".join(line.format(e=e, loss=0.2 - 0.01 * k) for k, e in enumerate(epochs))
    path = tmp_path / "train.log"
    path.write_text(text)
    run = pipeline.load(str(path))
    assert [r.kind for r in run.meta.structure.restarts] == ["appended_run"] * 3
    # the last run alone is the report; the four-epoch run is analysed on its own (an epoch-1 run
    # written again right after itself is rewritten by the later write, as a step would be)
    assert run.table.height == 1
    assert [e.table["step"].to_list() for e in run.earlier] == [[1, 2, 3, 4]]
