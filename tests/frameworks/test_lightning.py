"""logdoctor.emit inside real Lightning runs (tiny GPT-2, CPU; DDP with 2 CPU processes):
one record per optimizer step, equal to the batches the model trained on (issue 16)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# Lightning itself (~4 CPU-s to import) is imported when a test here runs, not when the module is
# collected: every xdist worker collects every module, and only one runs these tests.
if importlib.util.find_spec("lightning") is None:
    pytest.skip("needs the 'frameworks' extra: pip install -e '.[frameworks]'", allow_module_level=True)
pytest.importorskip("torch", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
pytest.importorskip("transformers", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")

from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

from logdoctor import pipeline
from logdoctor.emit.collate import RecordingCollator
from logdoctor.emit.torch import RecordingBatchSampler
from tests.frameworks.tiny import BucketedSampler, Samples, corpus, expected, pad_collate, read_jsonl


def fit(*args: Any, **kwargs: Any) -> Any:
    """tests.frameworks.plrun.fit (imports Lightning)."""
    from tests.frameworks.plrun import fit as fit_

    return fit_(*args, **kwargs)


def ld_callback(*args: Any, **kwargs: Any) -> Any:
    """A logdoctor.emit.lightning.LogdoctorCallback (imports Lightning)."""
    from logdoctor.emit.lightning import LogdoctorCallback

    return LogdoctorCallback(*args, **kwargs)


def seen_batches(out: Path, rank: int = 0) -> list[list[int]]:
    from tests.frameworks.plrun import seen_batches as seen_

    return seen_(out, rank)


def losses(out: Path, rank: int = 0) -> list[float]:
    from tests.frameworks.plrun import losses as losses_

    return losses_(out, rank)


SEQS = corpus()
LENGTHS = np.array([len(s) for s in SEQS])
RECORD = ("n_seq", "tokens", "len_mean", "len_min", "len_max", "pad_frac", "batch_fp")
REPO = Path(__file__).resolve().parents[2]


def record(row: dict[str, object]) -> dict[str, object]:
    return {k: row[k] for k in RECORD if k in row}


def collated(shuffle: bool = True, batch_size: int = 8, **kw: object) -> DataLoader:
    return DataLoader(
        Samples(SEQS), batch_size=batch_size, shuffle=shuffle, collate_fn=RecordingCollator(pad_collate), **kw
    )  # type: ignore[arg-type]


def test_accumulation_writes_one_line_per_optimizer_step(tmp_path: Path) -> None:
    """Issue 16.5: accumulate_grad_batches=4: one line per optimizer step, statistics over its 4
    micro-batches, the loss as training_step returned it (Lightning hands callbacks loss / 4)."""
    fit(tmp_path, collated(batch_size=4), ld_callback(jsonl=tmp_path / "ld.jsonl"), SEQS, accumulate_grad_batches=4)
    rows, seen, loss = read_jsonl(tmp_path / "ld.jsonl"), seen_batches(tmp_path), losses(tmp_path)
    assert [r["step"] for r in rows] == list(range(1, 13)) and len(seen) == 48
    for k, row in enumerate(rows):
        assert record(row) == expected(SEQS, [seen[4 * k : 4 * k + 4]]) and row["n_seq"] == 16
        assert row["loss"] == pytest.approx(np.mean(loss[4 * k : 4 * k + 4]), rel=1e-6)
        assert row["epoch"] == k // 6


def test_validation_batches_and_workers(tmp_path: Path) -> None:
    """Validation batches share the collator and are dropped; workers collate (issue 16.3, 16.6)."""
    fit(
        tmp_path,
        collated(num_workers=2),
        ld_callback(jsonl=tmp_path / "ld.jsonl"),
        SEQS,
        val=DataLoader(Samples(corpus(8, seed=1)), batch_size=4, collate_fn=RecordingCollator(pad_collate)),
    )
    rows, seen = read_jsonl(tmp_path / "ld.jsonl"), seen_batches(tmp_path)
    assert len(rows) == len(seen) == 24
    for row, batch in zip(rows, seen, strict=True):
        assert record(row) == expected(SEQS, [[batch]])


def test_set_epoch_reaches_the_sampler_inside_the_wrapper(tmp_path: Path) -> None:
    """Issue 16.1: Lightning calls set_epoch on ``loader.batch_sampler.sampler``; through the
    wrapper it must reach the DistributedSampler, or every epoch repeats epoch 0's batches."""
    inner = BatchSampler(DistributedSampler(Samples(SEQS), num_replicas=1, rank=0, shuffle=True), 8, False)
    sampler = RecordingBatchSampler(inner, LENGTHS)
    loader = DataLoader(Samples(SEQS), batch_sampler=sampler, collate_fn=pad_collate)
    fit(tmp_path, loader, ld_callback(sampler.recorder, jsonl=tmp_path / "ld.jsonl"), SEQS)
    rows, seen = read_jsonl(tmp_path / "ld.jsonl"), seen_batches(tmp_path)
    for row, batch in zip(rows, seen, strict=True):
        assert record(row) == expected(SEQS, [[batch]])
    first = {r["batch_fp"] for r in rows if r["epoch"] == 0}
    assert len(rows) == 24 and not first & {r["batch_fp"] for r in rows if r["epoch"] == 1}


def test_plain_set_epoch_call_reaches_the_distributed_sampler() -> None:
    """Issue 16.1, the documented ``loader.batch_sampler.set_epoch(epoch)`` in a plain loop."""
    inner = BatchSampler(DistributedSampler(Samples(SEQS), num_replicas=1, rank=0, shuffle=True), 8, False)
    sampler = RecordingBatchSampler(inner, LENGTHS)
    epoch0 = [list(b) for b in sampler]
    sampler.set_epoch(1)
    assert [list(b) for b in sampler] != epoch0
    assert sampler.sampler is inner.sampler and sampler.batch_size == 8


#: What libstdc++ prints when a process exits with a gloo thread still joinable: a spawned rank of torch's
#: ddp_spawn aborted so once, after ``Trainer.fit stopped``, under the full suite's load (round 9).
TEARDOWN_ABORT = "terminate called without an active exception"


def _run_ddp(out: Path, strategy: str) -> list[dict[str, object]]:
    """Run the two-rank recipe; run it once more, from an empty folder, only when a rank died in torch's own
    teardown after the fit had stopped (the run is then judged again whole: nothing of it is kept)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    for attempt in (1, 2):
        proc = subprocess.run(
            [sys.executable, "-m", "tests.frameworks.plrun", str(out), strategy],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        torn = TEARDOWN_ABORT in proc.stderr and "`Trainer.fit` stopped" in proc.stderr
        if proc.returncode == 0 or not torn or attempt == 2:
            break
        shutil.rmtree(out)
        out.mkdir()
    assert proc.returncode == 0, proc.stderr[-3000:]
    return read_jsonl(out / "logdoctor.jsonl")


@pytest.mark.parametrize("strategy", ["ddp_fork", pytest.param("ddp_spawn", marks=pytest.mark.slow)])
def test_ddp_two_processes_write_the_global_batch_once(tmp_path: Path, strategy: str) -> None:
    """Issues 16.2 and 16.4: the documented recipe with devices=2 (Lightning injects its
    DistributedSampler); rank 0 writes one line per step for the global batch of both ranks.
    ddp_spawn also pickles the callback into fresh processes."""
    rows = _run_ddp(tmp_path, strategy)
    seen = [seen_batches(tmp_path, r) for r in (0, 1)]
    loss = [losses(tmp_path, r) for r in (0, 1)]
    assert [r["step"] for r in rows] == list(range(1, 25)) and len(seen[0]) == len(seen[1]) == 24
    for k, row in enumerate(rows):
        assert record(row) == expected(SEQS, [[seen[0][k], seen[1][k]]]) and row["n_seq"] == 8
        assert row["loss"] == pytest.approx((loss[0][k] + loss[1][k]) / 2, rel=1e-6)


@pytest.mark.parametrize(("order", "verdict"), [("fixed", "static"), ("bucketed", "healthy")])
def test_fingerprinted_runs_get_the_right_verdict(tmp_path: Path, order: str, verdict: str) -> None:
    if order == "fixed":
        loader, callback = collated(shuffle=False), ld_callback(jsonl=tmp_path / "ld.jsonl")
    else:
        sampler = RecordingBatchSampler(BucketedSampler(SEQS), LENGTHS)
        loader = DataLoader(Samples(SEQS), batch_sampler=sampler, collate_fn=pad_collate)
        callback = ld_callback(sampler.recorder, jsonl=tmp_path / "ld.jsonl")
    fit(tmp_path, loader, callback, SEQS, max_epochs=5)
    report = pipeline.analyze(pipeline.load(str(tmp_path / "ld.jsonl")))
    assert report.series.steps == 60
    assert report.verdict.batching == verdict, report.verdict.evidence
    assert report.verdict.evidence["recurrence_kind"] == "fingerprint"


def test_sparse_logger_rows_pair_loss_and_statistics_of_one_step(tmp_path: Path) -> None:
    """Issue 16.9: with log_every_n_steps the logger keeps every n-th step; its statistics are
    that step's, like its loss, and the report does not claim the log has none."""
    import csv

    fit(tmp_path, collated(), ld_callback(jsonl=tmp_path / "ld.jsonl"), SEQS, log_every_n_steps=5)
    lines = {r["step"]: r for r in read_jsonl(tmp_path / "ld.jsonl")}
    path = next((tmp_path / "csv").glob("*/metrics.csv"))
    rows = [r for r in csv.DictReader(path.open()) if r["loss"]]
    assert len(rows) == 4
    for row in rows:  # the logger's step is 0-based, the optimizer step after it 1-based
        line = lines[int(row["step"]) + 1]
        assert float(row["len_mean"]) == pytest.approx(line["len_mean"])
        assert float(row["loss"]) == pytest.approx(line["loss"], rel=1e-6)
    report = pipeline.analyze(pipeline.load(str(path)))
    assert "no per-batch statistics" not in report.verdict.summary
    assert "logged on only 4 steps" in report.verdict.summary


@pytest.mark.slow  # ~40 s: the surviving rank waits for the one that stopped (the fast check: test_emit_faults.py)
def test_ddp_default_with_a_recording_batch_sampler_stops_with_advice(tmp_path: Path) -> None:
    """Issue 31.5: DDP with the default use_distributed_sampler=True re-creates the batch sampler;
    the run stops with Lightning's message and ours (not a raw TypeError about batch_size)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "tests.frameworks.plrun", str(tmp_path), "ddp_fork+sampler"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert "use_distributed_sampler=False" in proc.stderr and "RecordingCollator" in proc.stderr
    assert "unexpected keyword argument" not in proc.stderr
