"""W&B history read a chunk at a time (issue 33, point 2) gives the table read in one piece."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers import wandb
from logdoctor.ingest.parsers.wandb import WandbParser
from logdoctor.ingest.sources import open_source
from tests.wandb_support import history, write_log


def _records(seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for i in range(1, 120):
        items: dict[str, object] = {"train/loss": round(2 - i / 100 + rng.random() / 10, 4)}
        if rng.random() < 0.3:
            items["eval/loss"] = 2  # an integer in some records, floats never
        if i > 60:
            items["train/grad_norm"] = rng.choice([1.5, None])  # absent from the early chunks
        if rng.random() < 0.5:
            items["batch_fp"] = rng.choice(["ab01", 12345])  # text, whatever it was logged as
        if rng.random() < 0.2:
            items["phase"] = "train"  # text that is no fingerprint: dropped
        out.append(history(i % 200, **items))  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize("seed", range(3))
def test_chunked_history_equals_one_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    log = tmp_path / "run-x.wandb"
    log.write_bytes(write_log(_records(seed)))

    def parse(chunk: int) -> object:
        monkeypatch.setattr("logdoctor.ingest.framechunks.CHUNK", chunk)
        return WandbParser().parse(open_source(str(log)), FieldMap())

    whole, chunked = parse(sys.maxsize), parse(7)
    assert chunked.table.schema == whole.table.schema and chunked.table.equals(whole.table)  # type: ignore[attr-defined]
    assert chunked.notes == whole.notes and chunked.table.height == 119  # type: ignore[attr-defined]


def test_history_records_are_not_kept_as_records(tmp_path: Path) -> None:
    log = tmp_path / "run-x.wandb"
    log.write_bytes(write_log([history(i, loss=1.0) for i in range(1, 5)]))
    seen: list[object] = []
    records, corrupt = wandb.read_records(log, "x", seen.append)
    assert (records, corrupt, len(seen)) == ([], 0, 4)
