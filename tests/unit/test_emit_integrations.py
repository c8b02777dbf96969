"""Recorder and framework integrations: pure logic always, real frameworks where installed."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from logdoctor.emit import BatchRecorder, batch_fingerprint, batch_stats
from logdoctor.emit.collate import RecordingCollator
from logdoctor.emit.torch import RecordingBatchSampler

LENGTHS = np.arange(100, 200)
BATCHES = [[0, 5, 9], [1, 2], [50, 60, 70, 80], [3]]


def test_recorder_fifo_and_merge() -> None:
    rec = BatchRecorder(LENGTHS)
    for b in BATCHES:
        rec.record(b)
    first = rec.pop()
    assert first == {**batch_stats(LENGTHS[BATCHES[0]]), "batch_fp": batch_fingerprint(BATCHES[0])}
    merged = rec.pop(2)  # gradient accumulation over two micro-batches
    both = BATCHES[1] + BATCHES[2]
    assert merged["batch_fp"] == batch_fingerprint(both)
    # each part's own fingerprint too: static parts recur even when their pairing does not
    assert merged["micro_fp"] == f"{batch_fingerprint(BATCHES[1])}+{batch_fingerprint(BATCHES[2])}"
    assert merged["n_seq"] == 6 and merged["tokens"] == int(LENGTHS[both].sum())
    padded = 2 * LENGTHS[BATCHES[1]].max() + 4 * LENGTHS[BATCHES[2]].max()
    assert merged["pad_frac"] == pytest.approx(1 - LENGTHS[both].sum() / padded)
    assert (merged["len_min"], merged["len_max"]) == (101, 180)
    assert rec.pop(5)["n_seq"] == 1 and rec.pop() == {} and len(rec) == 0


def test_micro_fingerprints_are_capped() -> None:
    """Accumulation times ranks beyond MAX_MICRO_FP parts: the union only (no kilobyte lines)."""
    from logdoctor.emit.keys import MAX_MICRO_FP
    from logdoctor.emit.stats import merge

    parts = [np.array([i]) for i in range(MAX_MICRO_FP + 1)]
    recs = [batch_stats([5]) for _ in parts]
    assert "micro_fp" not in merge(recs, parts) and "batch_fp" in merge(recs, parts)
    assert merge(recs[:MAX_MICRO_FP], parts[:MAX_MICRO_FP])["micro_fp"].count("+") == MAX_MICRO_FP - 1
    assert "micro_fp" not in merge(recs[:1], parts[:1])  # one part: its batch_fp says it all


def test_recorder_with_length_function() -> None:
    rec = BatchRecorder(lambda i: 2 * i + 1)
    assert rec.record([3, 4])["len_max"] == 9


def test_batch_sampler_wrapper_yields_unchanged_and_records_in_order() -> None:
    sampler = RecordingBatchSampler(BATCHES, LENGTHS)
    it = iter(sampler)
    prefetched = [next(it), next(it)]  # a DataLoader asks ahead of the loop
    assert prefetched == BATCHES[:2] and len(sampler.recorder) == 2
    assert sampler.pop()["batch_fp"] == batch_fingerprint(BATCHES[0])
    assert list(it) == BATCHES[2:] and len(sampler) == 4
    assert sampler.pop()["batch_fp"] == batch_fingerprint(BATCHES[1])


def test_set_epoch_is_forwarded() -> None:
    class Inner(list[list[int]]):
        epoch = -1

        def set_epoch(self, e: int) -> None:
            self.epoch = e

    inner = Inner(BATCHES)
    RecordingBatchSampler(inner, LENGTHS).set_epoch(3)
    assert inner.epoch == 3


def test_collator_records_lengths_and_index_fingerprint() -> None:
    seen: list[Any] = []
    coll = RecordingCollator(lambda feats: seen.append(feats) or len(feats))
    feats = [{"input_ids": [1] * n, "idx": i} for i, n in [(7, 3), (2, 5)]]
    assert coll(feats) == 2
    assert all("idx" not in f for f in seen[0]) and all("idx" in f for f in feats)
    rec = coll.recorder.pop()
    assert rec["batch_fp"] == batch_fingerprint([2, 7]) and rec["len_max"] == 5
    coll([{"input_ids": [1, 2]}])
    assert "batch_fp" not in coll.recorder.pop()


def test_hf_callback_logic(tmp_path: Path) -> None:
    """The forward pre-hook takes training batches' records out of the batch; the step combines
    its micro-batches; the log gets the numbers, log_history and the JSONL the fingerprint too."""
    from logdoctor.emit.carry import RECORD_KEY, Carried
    from logdoctor.emit.hf import LogdoctorCallback

    cb = LogdoctorCallback(jsonl=tmp_path / "sub" / "ld.jsonl")
    args = SimpleNamespace(gradient_accumulation_steps=2)
    state = SimpleNamespace(global_step=0, max_steps=10, log_history=[], epoch=0.0)
    cb.on_train_begin(args, state, None)
    for b, training in ((BATCHES[0], True), (BATCHES[3], False), (BATCHES[1], True)):
        kwargs = {"input_ids": None, RECORD_KEY: Carried(LENGTHS[b], b)}
        cb._pre_forward(SimpleNamespace(training=training), (), kwargs)
        assert RECORD_KEY not in kwargs  # the model never sees it
    state.global_step = 1
    cb.on_step_end(args, state, None)
    logs = {"loss": 2.5, "learning_rate": 1e-4, "epoch": 0.1}
    state.log_history.append({**logs, "step": 1})
    cb.on_log(args, state, None, logs=logs)
    fp = batch_fingerprint(BATCHES[0] + BATCHES[1])
    assert "batch_fp" not in logs and logs["n_seq"] == 5 and state.log_history[-1]["batch_fp"] == fp
    eval_logs = {"eval_loss": 3.0}
    cb.on_log(args, state, None, logs=eval_logs)
    assert "n_seq" not in eval_logs
    cb.on_train_end(args, state, None)
    row = json.loads((tmp_path / "sub" / "ld.jsonl").read_text())
    assert row["step"] == 1 and row["loss"] == 2.5 and row["batch_fp"] == fp and row["n_seq"] == 5
    assert row["epoch"] == 0


def test_lightning_callback_logic(tmp_path: Path) -> None:
    from logdoctor.emit.carry import RECORD_KEY, Carried
    from logdoctor.emit.lightning import LogdoctorCallback

    logged: dict[str, float] = {}
    module = SimpleNamespace(log_dict=lambda d, **kw: logged.update(d))
    trainer = SimpleNamespace(global_step=0, current_epoch=1, accumulate_grad_batches=2)
    cb = LogdoctorCallback(jsonl=tmp_path / "ld.jsonl")
    cb.on_train_start(trainer, module)
    for b, loss in ((BATCHES[2], 0.5), (BATCHES[0], 0.75)):
        batch = {RECORD_KEY: Carried(LENGTHS[b], b)}
        cb.on_train_batch_start(trainer, module, batch, 0)
        assert batch == {}
        trainer.global_step += loss == 0.75  # the optimizer steps after the second micro-batch
        cb.on_train_batch_end(trainer, module, {"loss": loss}, batch, 0)
    cb.on_train_end(trainer, module)
    assert logged["n_seq"] == 7.0 and "batch_fp" not in logged
    row = json.loads((tmp_path / "ld.jsonl").read_text())
    assert row == {"step": 1, "loss": 1.25, "epoch": 1, **cb.latest}
    assert row["batch_fp"] == batch_fingerprint(BATCHES[2] + BATCHES[0])


def test_with_torch_dataloader() -> None:
    torch = pytest.importorskip("torch")
    sampler = RecordingBatchSampler(BATCHES, LENGTHS)
    loader = torch.utils.data.DataLoader(torch.arange(100), batch_sampler=sampler)
    got = [b.tolist() for b in loader]
    assert got == BATCHES
    assert [sampler.pop()["batch_fp"] for _ in BATCHES] == [batch_fingerprint(b) for b in BATCHES]


def test_with_transformers() -> None:
    transformers = pytest.importorskip("transformers")
    from logdoctor.emit.hf import LogdoctorCallback

    assert isinstance(LogdoctorCallback(BatchRecorder(LENGTHS)), transformers.TrainerCallback)


def test_with_lightning() -> None:
    lightning = pytest.importorskip("lightning")
    from logdoctor.emit.lightning import LogdoctorCallback

    assert isinstance(LogdoctorCallback(BatchRecorder(LENGTHS)), lightning.pytorch.Callback)


def test_emit_imports_no_framework() -> None:
    import subprocess
    import sys

    code = "import sys, logdoctor.emit; print(any(m in sys.modules for m in ('torch', 'transformers', 'lightning')))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout.strip()
    assert out == "False"


def test_carried_record_survives_pickling_and_is_taken_out_once() -> None:
    """What DataLoader workers do to the batch (pickle) and what the callbacks do (take it out)."""
    import pickle

    from logdoctor.emit.carry import RECORD_KEY, Carried, take_carried

    batch = {"input_ids": np.zeros((2, 9)), RECORD_KEY: Carried([3, 5], [7, 2])}
    batch = pickle.loads(pickle.dumps(batch))
    carried = take_carried(batch)
    assert carried is not None and take_carried(batch) is None and RECORD_KEY not in batch
    rec, idx = carried.pair(pad_to=9)
    assert rec == {**batch_stats([3, 5], pad_to=9), "batch_fp": batch_fingerprint([2, 7])}
    assert idx.tolist() == [7, 2]
    assert "batch_fp" not in Carried([3, 5], None).pair()[0]


def test_a_new_run_moves_the_old_file_aside(tmp_path: Path) -> None:
    from logdoctor.emit.dist import gather, is_rank_zero
    from logdoctor.emit.session import fresh_path

    path = tmp_path / "ld.jsonl"
    assert fresh_path(path) is None
    path.write_text("{}\n")
    (tmp_path / "ld.1.jsonl").write_text("old\n")
    assert fresh_path(path) == tmp_path / "ld.2.jsonl" and not path.exists()
    assert gather([1, 2]) == [1, 2] and is_rank_zero()  # one process: no collective


def test_lightning_callback_warns_once_when_it_cannot_record() -> None:
    """Issue 16.6: nothing recorded, or no fingerprint, is said once, never silent."""
    import warnings

    from logdoctor.emit.carry import RECORD_KEY, Carried
    from logdoctor.emit.lightning import LogdoctorCallback

    cb = LogdoctorCallback()
    trainer = SimpleNamespace(global_step=0, current_epoch=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            cb.on_train_batch_start(trainer, None, {"input_ids": [1]}, 0)
            cb.on_train_batch_start(trainer, None, {RECORD_KEY: Carried([2, 3], None)}, 0)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2 and "RecordingCollator" in messages[0] and "batch_fp" in messages[1]
