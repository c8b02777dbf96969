"""logdoctor.emit inside a real Hugging Face Trainer run (tiny GPT-2, CPU): the records are the
batches the model trained on, in every standard set-up (issue 16)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
pytest.importorskip("transformers", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
pytest.importorskip("accelerate", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")

from logdoctor import pipeline
from tests.frameworks.hfrun import train
from tests.frameworks.tiny import corpus, expected

SEQS = corpus()
RECORD = ("n_seq", "tokens", "len_mean", "len_min", "len_max", "pad_frac", "batch_fp")


def record(row: dict[str, object], keys: tuple[str, ...] = RECORD) -> dict[str, object]:
    return {k: row[k] for k in keys if k in row}


def steps_of(batches: list[list[int]], per_step: int) -> list[list[list[int]]]:
    return [batches[i : i + per_step] for i in range(0, len(batches), per_step)]


def test_single_process_records_are_the_trained_batches(tmp_path: Path) -> None:
    rows, seen, _ = train(tmp_path)
    assert [r["step"] for r in rows] == list(range(1, 25)) and len(seen.batches) == 24
    for row, step in zip(rows, steps_of(seen.batches, 1), strict=True):
        assert record(row) == expected(SEQS, [step])


def test_gradient_accumulation_merges_the_micro_batches(tmp_path: Path) -> None:
    rows, seen, _ = train(tmp_path, gradient_accumulation_steps=3, max_steps=8)
    assert len(rows) == 8 and len(seen.batches) == 24
    for row, step in zip(rows, steps_of(seen.batches, 3), strict=True):
        assert record(row) == expected(SEQS, [step]) and row["n_seq"] == 24


def test_evaluation_batches_are_not_recorded(tmp_path: Path) -> None:
    """Issue 16.3: the Trainer collates evaluation batches with the same collator."""
    rows, seen, trainer = train(tmp_path, eval_every=5)
    assert any("eval_loss" in h for h in trainer.state.log_history)
    for row, step in zip(rows, steps_of(seen.batches, 1), strict=True):
        assert record(row) == expected(SEQS, [step])


def test_dataloader_workers(tmp_path: Path) -> None:
    """Issue 16.6: with worker processes the collator runs elsewhere; the JSONL must not stay empty."""
    rows, seen, _ = train(tmp_path, dataloader_num_workers=2, max_steps=12, dataloader_persistent_workers=True)
    assert len(rows) == 12
    for row, step in zip(rows, steps_of(seen.batches, 1), strict=True):
        assert record(row) == expected(SEQS, [step])


def test_dropped_index_column_warns_once_and_keeps_the_statistics(tmp_path: Path) -> None:
    """Issue 16.6: remove_unused_columns=True (the default) drops 'idx': say so, once."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows, seen, _ = train(tmp_path, remove_unused_columns=True, max_steps=6)
    ours = [w for w in caught if "batch_fp" in str(w.message)]
    assert len(ours) == 1 and "remove_unused_columns=False" in str(ours[0].message)
    assert len(rows) == 6 and all("batch_fp" not in r for r in rows)
    for row, step in zip(rows, steps_of(seen.batches, 1), strict=True):
        assert record(row) == expected(SEQS, [step], fingerprint=False)


def test_logging_interval_merges_its_steps(tmp_path: Path) -> None:
    """Issue 16.9: with logging_steps=4 the loss is a 4-step mean; the statistics cover the same
    4 steps (merged), and no fingerprint (a 4-step union could not prove anything)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows, seen, _ = train(tmp_path, logging_steps=4)
    assert [r["step"] for r in rows] == [4, 8, 12, 16, 20, 24]
    assert any("merged over each interval" in str(w.message) for w in caught)
    for row, interval in zip(rows, steps_of(seen.batches, 4), strict=True):
        assert record(row) == expected(SEQS, [interval], fingerprint=False)


def test_jsonl_inside_output_dir_and_a_rerun_is_not_a_resume(tmp_path: Path) -> None:
    """Issue 16.8: the file's folder does not exist when the callback is built; a second run
    into the same folder starts a new file (the first is kept beside it)."""
    out = tmp_path / "out"
    path = out / "logs" / "logdoctor.jsonl"
    train(out, jsonl=path, max_steps=12)
    with pytest.warns(RuntimeWarning, match="moved to logdoctor.1.jsonl"):
        rows, _, _ = train(out, jsonl=path, max_steps=12)
    assert [r["step"] for r in rows] == list(range(1, 13))
    assert (path.parent / "logdoctor.1.jsonl").is_file()
    assert pipeline.load(str(path)).meta.resumes == 0


def test_a_resumed_run_appends(tmp_path: Path) -> None:
    """Issue 16.8: a run resumed from a checkpoint continues the same file, read as one resume."""
    path = tmp_path / "logdoctor.jsonl"
    train(tmp_path, max_steps=12, save_strategy="steps", save_steps=6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows, _, _ = train(tmp_path, max_steps=12, save_strategy="no", resume=str(tmp_path / "checkpoint-6"))
    assert not any("moved to" in str(w.message) for w in caught)
    assert [r["step"] for r in rows] == [*range(1, 13), *range(7, 13)]
    run = pipeline.load(str(path))
    assert run.meta.resumes == 1 and run.table["step"].to_list() == list(range(1, 13))


def test_epoch_of_an_epochs_last_step(tmp_path: Path) -> None:
    """Issue 16.10: HF's ``epoch`` is progress (1.0 at epoch 0's last step); lines carry the index."""
    rows, _, _ = train(tmp_path, max_steps=-1, num_train_epochs=2)
    assert len(rows) == 24
    assert [r["epoch"] for r in rows] == [0] * 12 + [1] * 12


def test_reporting_integrations_log_the_statistics(tmp_path: Path) -> None:
    """Issue 16.7 and 16.10: TensorBoard gets the statistics; logdoctor reads HF's train/epoch and
    not the end-of-training summary as a step."""
    pytest.importorskip("tensorboard", reason="needs tensorboard")
    rows, _, _ = train(
        tmp_path, attach=True, report_to=["tensorboard"], max_steps=-1, num_train_epochs=3, logging_steps=5
    )
    run = pipeline.load(str(tmp_path / "runs"))
    assert run.table["step"].to_list() == [r["step"] for r in rows] == list(range(5, 36, 5))
    for col in ("epoch", "len_mean", "tokens", "pad_frac"):
        assert run.has(col), col
    assert run.table["len_mean"].to_list() == pytest.approx([r["len_mean"] for r in rows])


def test_a_tensorboard_log_of_a_shuffled_run_is_judged(tmp_path: Path) -> None:
    """Issue 16.7: with HF's train/epoch read, a shuffled run's TensorBoard log is not inconclusive;
    the last step's loss is the step's, not the run mean of the summary written at the same step."""
    pytest.importorskip("tensorboard", reason="needs tensorboard")
    rows, _, _ = train(tmp_path, attach=True, report_to=["tensorboard"], max_steps=-1, num_train_epochs=5)
    run = pipeline.load(str(tmp_path / "runs"))
    assert run.table["loss"].to_list() == pytest.approx([r["loss"] for r in rows])
    report = pipeline.analyze(run)
    assert report.series.epochs == 5.0 and report.verdict.batching == "healthy", report.verdict.summary


@pytest.mark.parametrize(("strategy", "verdict"), [("sequential", "static"), ("group_by_length", "grouped")])
def test_fingerprinted_runs_get_the_right_verdict(tmp_path: Path, strategy: str, verdict: str) -> None:
    rows, _, _ = train(tmp_path, max_steps=-1, num_train_epochs=5, train_sampling_strategy=strategy)
    assert len(rows) == 60
    report = pipeline.analyze(pipeline.load(str(tmp_path / "logdoctor.jsonl")))
    assert report.verdict.batching == verdict, report.verdict.evidence
    assert report.verdict.evidence["recurrence_kind"] == "fingerprint"
