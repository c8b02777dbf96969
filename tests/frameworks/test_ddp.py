"""Two CPU processes (gloo, started as torchrun would): one line per step for the global batch,
written once, by rank 0 (issue 16.4)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
pytest.importorskip("transformers", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")

from tests.frameworks.tiny import corpus, expected, read_jsonl

SEQS = corpus()
RECORD = ("n_seq", "tokens", "len_mean", "len_min", "len_max", "pad_frac", "batch_fp")
REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_two(kind: str, out: Path) -> tuple[list[dict[str, object]], list[list[list[int]]]]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "tests.frameworks.ddprun", kind, str(out), str(_free_port())],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = [json.loads((out / f"seen{r}.json").read_text()) for r in (0, 1)]
    return read_jsonl(out / "logdoctor.jsonl"), seen


def check(rows: list[dict[str, object]], seen: list[list[list[int]]], micro: int) -> None:
    assert [r["step"] for r in rows] == list(range(1, len(rows) + 1))
    assert len(seen[0]) == len(seen[1]) == micro * len(rows)
    for k, row in enumerate(rows):
        step = seen[0][micro * k : micro * (k + 1)] + seen[1][micro * k : micro * (k + 1)]
        assert {key: row[key] for key in RECORD} == expected(SEQS, [step])


def test_plain_torch_ddp(tmp_path: Path) -> None:
    rows, seen = run_two("torch", tmp_path)
    assert len(rows) == 12
    check(rows, seen, micro=2)
    epochs = [{r["batch_fp"] for r in rows if r["epoch"] == e} for e in (0, 1)]
    assert not epochs[0] & epochs[1]  # set_epoch reached the DistributedSampler (issue 16.1)


def test_hf_trainer_ddp(tmp_path: Path) -> None:
    rows, seen = run_two("hf", tmp_path)
    assert len(rows) == 12 and all(r["n_seq"] == 16 for r in rows)
    check(rows, seen, micro=2)


def test_docs_recipe_with_accumulation_that_does_not_divide_the_epoch(tmp_path: Path) -> None:
    """Issue 31.3: docs/emit.md's loop as printed; 12 micro-batches per rank and epoch in steps of
    5, 5 and 2: every line is its global batch, the loss rank 0's mean over the step."""
    rows, seen = run_two("docs", tmp_path)
    loss = json.loads((tmp_path / "losses0.json").read_text())
    sizes, start = [5, 5, 2] * 2, 0
    assert len(rows) == len(sizes) and len(seen[0]) == len(seen[1]) == 24
    for row, n in zip(rows, sizes, strict=True):
        step = seen[0][start : start + n] + seen[1][start : start + n]
        assert {key: row[key] for key in RECORD} == expected(SEQS, [step])
        assert row["loss"] == pytest.approx(sum(loss[start : start + n]) / n, rel=1e-6)
        start += n
