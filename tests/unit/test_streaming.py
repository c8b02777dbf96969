"""Bounded-memory ingest: chunked reading matches a whole read; reduction is exact and says so."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.errors import ConfigError, InputError
from logdoctor.ingest import memory, streaming
from logdoctor.ingest.reduce import LOSS_MAX, BlockReducer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FORMATS = FIXTURES / "formats"
BUDGET = 16 * 1024  # in-memory limit 2 KiB: every fixture below is streamed


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 1 KiB, so that a fixture of a few KiB spans many chunks."""
    monkeypatch.setattr(memory, "MIN_CHUNK", 1024)


def _sawtooth_log(path: Path, n: int, spike_at: int) -> np.ndarray:
    rng = np.random.default_rng(3)
    steps = np.arange(1, n + 1)
    loss = 2 + np.exp(-steps / 5000) + 0.3 * (steps % 400) / 400 + 0.02 * rng.standard_normal(n)
    loss[spike_at - 1] = 40.0
    lines = [f"step {s}/{n} | loss={v:.6f} lr=3e-4 epoch={s // 400} tok=7\n" for s, v in zip(steps, loss, strict=True)]
    path.write_text("banner: training starts\n" + "".join(lines))
    return loss


@pytest.mark.parametrize(
    "name", ["canonical.log", "jsonl_basic.jsonl", "csv_lightning_metrics.csv", "struct_resumed.jsonl", "megatron.log"]
)
def test_streamed_rows_equal_a_whole_read(name: str, small_chunks: None) -> None:
    whole = pipeline.load(str(FORMATS / name))
    streamed = pipeline.load(str(FORMATS / name), max_memory=BUDGET)
    assert any("read in chunks" in n for n in streamed.meta.notes)
    cols = [c for c in whole.table.columns if c in streamed.table.columns]
    assert streamed.table.select(cols).equals(whole.table.select(cols))
    assert streamed.meta.lines_read == whole.meta.lines_read
    assert streamed.meta.lines_skipped == whole.meta.lines_skipped
    assert streamed.meta.resumes == whole.meta.resumes


def test_reduced_run_keeps_the_statistics(tmp_path: Path) -> None:
    log = tmp_path / "long.log"
    loss = _sawtooth_log(log, 40_000, spike_at=12_345)
    run = pipeline.load(str(log), max_memory=256 * 1024)  # row budget 2,000
    t = run.table
    assert 1_000 <= t.height <= 2_000
    k = int(t["step"][1] - t["step"][0])
    assert k == 32 and any(f"1 row per {k} steps" in n and "40,000 step records" in n for n in run.meta.notes)
    assert t["loss"].mean() == pytest.approx(loss.mean(), rel=1e-3)
    spike_row = t.filter(pl.col(LOSS_MAX) > 30)
    assert spike_row["step"].to_list() == [12_345 // k * k]
    assert run.meta.steps_per_epoch == 400  # counted on the raw records, not the blocks
    assert run.meta.lines_read == 40_001 and "tok" not in t.columns  # extra columns dropped
    assert int(t["block_steps"].sum()) == 40_000
    # per-block means are exact
    block = (np.arange(1, 40_001) // k) * k
    means = pl.DataFrame({"b": block, "l": loss}).group_by("b").agg(pl.col("l").mean()).sort("b")
    assert np.allclose(t["loss"].to_numpy(), means["l"].to_numpy())


@pytest.mark.parametrize("sizes", [[10_000], [1, 999, 4_000, 5_000], [3_333, 3_333, 3_334]])
def test_block_reduction_does_not_depend_on_chunking(sizes: list[int]) -> None:
    rng = np.random.default_rng(0)
    table = pl.DataFrame(
        {
            "step": np.arange(10_000),
            "loss": rng.random(10_000),
            "line_no": np.arange(1, 10_001),
            "lr": rng.random(10_000),
            "batch_fp": [f"{i:x}" for i in range(10_000)],
        }
    )
    reducer = BlockReducer(max_rows=700)
    start = 0
    for n in sizes:
        reducer.add(table.slice(start, n))
        start += n
    out, notes = reducer.finish()
    assert reducer.k == 16 and out.height == 625 and notes
    assert out["batch_fp"][1] == f"{16:x}"  # the block's first record
    assert out[LOSS_MAX][0] == pytest.approx(table["loss"][:16].max())
    assert out["lr"][2] == pytest.approx(table["lr"][32:48].mean())


def test_nonfinite_loss_stays_visible_in_its_block() -> None:
    reducer = BlockReducer(max_rows=2)
    loss = [1.0, float("nan"), 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]
    reducer.add(pl.DataFrame({"step": range(8), "loss": loss, "line_no": range(1, 9)}))
    out, _ = reducer.finish()
    assert np.isnan(out["loss"][0]) and out["loss"][1] == 2.0 and out[LOSS_MAX][0] == 1.0


def test_gzip_is_streamed_and_truncated_gzip_is_an_input_error(tmp_path: Path) -> None:
    data = (FORMATS / "canonical.log").read_bytes()
    packed = tmp_path / "run.log.gz"
    packed.write_bytes(gzip.compress(data, mtime=0))
    run = pipeline.load(str(packed), max_memory=BUDGET)
    assert run.table.equals(pipeline.load(str(FORMATS / "canonical.log")).table.select(run.table.columns))
    packed.write_bytes(gzip.compress(data, mtime=0)[:-200])
    with pytest.raises(InputError, match="gzip data is corrupt or truncated"):
        pipeline.load(str(packed), max_memory=BUDGET)


def test_huge_whole_document_is_refused_politely() -> None:
    with pytest.raises(InputError, match=r"hf_trainer_state document larger than .*--max-memory"):
        pipeline.load(str(FORMATS / "hf_trainer_state.json"), max_memory=BUDGET)


def test_large_stdin_is_streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (FORMATS / "canonical.log").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    run = pipeline.load("-", max_memory=BUDGET)
    assert any("read in chunks" in n for n in run.meta.notes)
    assert run.table.height == pipeline.load(str(FORMATS / "canonical.log")).table.height


def test_iter_chunks_cuts_at_line_ends() -> None:
    data = b"".join(f"line {i}\n".encode() for i in range(1000)) + b"tail"
    chunks = list(streaming.iter_chunks(io.BytesIO(data), 100, "x: raw"))  # type: ignore[arg-type]
    assert b"".join(chunks) == data
    assert all(c.endswith(b"\n") for c in chunks[:-1])
    long_line = b"x" * 1000 + b"\n"
    assert b"".join(streaming.iter_chunks(io.BytesIO(long_line), 100, "x: raw")) == long_line  # type: ignore[arg-type]


def test_budget_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    assert memory.parse_size("512M") == 512 * 2**20 and memory.parse_size("1.5g") == 3 * 2**29
    assert memory.parse_size("2000") == 2000 and memory.parse_size("4GiB") == 4 * 2**30
    monkeypatch.setenv(memory.ENV_VAR, "3M")
    assert memory.budget() == 3 * 2**20 and memory.budget(1000) == 1000
    monkeypatch.setenv(memory.ENV_VAR, "lots")
    with pytest.raises(ConfigError, match="lots"):
        memory.budget()
    monkeypatch.delenv(memory.ENV_VAR)
    assert memory.MIN_AUTO_BUDGET <= memory.budget() <= max(memory.MIN_AUTO_BUDGET, memory.available_memory())
    monkeypatch.setattr(memory, "available_memory", lambda: 10 * 2**20)  # a busy machine
    assert memory.budget() == memory.MIN_AUTO_BUDGET


def test_max_memory_option_reaches_ingest(capsys: pytest.CaptureFixture[str]) -> None:
    from logdoctor.cli import main

    rc = main(["analyze", str(FORMATS / "canonical.log"), "--max-memory", "16K", "--format", "json"])
    assert rc == 0
    assert "read in chunks" in capsys.readouterr().out
    assert main(["analyze", str(FORMATS / "canonical.log"), "--max-memory", "much"]) == 2
    assert "not a positive size" in capsys.readouterr().err


def test_parallel_workers_share_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.config import AnalysisConfig

    assert pipeline.worker_config(AnalysisConfig(max_memory=8 * 2**20), 4).max_memory == 2 * 2**20
    monkeypatch.setenv(memory.ENV_VAR, "1G")
    assert pipeline.worker_config(AnalysisConfig(), 2).max_memory == 2**29


def test_reduced_analysis_finds_what_the_full_one_finds(tmp_path: Path) -> None:
    log = tmp_path / "long.log"
    _sawtooth_log(log, 40_000, spike_at=23_456)
    full = pipeline.analyze(pipeline.load(str(log)))
    reduced = pipeline.analyze(pipeline.load(str(log), max_memory=256 * 1024))
    k = 32
    for report in (full, reduced):
        codes_found = {f.code for f in report.findings}
        assert {"LD101", "LD201"} <= codes_found, codes_found
    assert reduced.artifacts.period == pytest.approx(full.artifacts.period, rel=0.02)
    assert abs(reduced.artifacts.period - 400) < 8  # type: ignore[operator]
    spikes = [f.evidence["step"] for f in reduced.findings if f.code == "LD101"]
    assert spikes == [23_456 // k * k]
    assert any("reduced to 1 row per 32 steps" in n for n in reduced.meta.notes)
