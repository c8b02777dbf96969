"""logdoctor.emit core: batch statistics, fingerprints, the canonical line and the JSONL writer."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from logdoctor.emit import JsonlWriter, batch_fingerprint, batch_stats, format_line

BATCH = {
    "n_seq": 12,
    "tokens": 7904,
    "len_mean": 658.7,
    "len_min": 610,
    "len_max": 700,
    "pad_frac": 0.035,
    "batch_fp": "3f2a9c1d",
}


def test_batch_stats_pads_to_batch_max_by_default() -> None:
    s = batch_stats([10, 20, 30, 40])
    assert s == {
        "n_seq": 4,
        "tokens": 100,
        "len_mean": 25.0,
        "len_min": 10,
        "len_max": 40,
        "pad_frac": pytest.approx(1 - 100 / 160),
    }
    assert batch_stats(np.array([10, 20, 30, 40]), pad_to=50)["pad_frac"] == pytest.approx(0.5)
    assert batch_stats(n for n in [7, 7])["pad_frac"] == 0.0


@pytest.mark.parametrize("lengths, pad_to", [([], None), ([5, 9], 8)])
def test_batch_stats_rejects(lengths: list[int], pad_to: int | None) -> None:
    with pytest.raises(ValueError):
        batch_stats(lengths, pad_to)


def test_fingerprint_is_blake2b_of_sorted_le_int64() -> None:
    expected = hashlib.blake2b(struct.pack("<3q", 2, 7, 1 << 40), digest_size=8).hexdigest()
    assert batch_fingerprint([7, 1 << 40, 2]) == expected
    assert batch_fingerprint(np.array([2, 7, 1 << 40], dtype=np.int64)) == expected
    assert len(expected) == 16 and int(expected, 16) >= 0


def test_fingerprint_order_independent_and_discriminating() -> None:
    rng = np.random.default_rng(0)
    idx = rng.choice(10_000, 32, replace=False)
    assert batch_fingerprint(idx) == batch_fingerprint(rng.permutation(idx))
    assert batch_fingerprint(idx) == batch_fingerprint(idx.tolist())
    fps = {batch_fingerprint(rng.choice(10_000, 32, replace=False)) for _ in range(2000)}
    assert len(fps) == 2000
    assert batch_fingerprint([1, 2, 3]) != batch_fingerprint([1, 2, 4])


def test_fingerprint_stable_across_processes() -> None:
    code = "from logdoctor.emit import batch_fingerprint as f; print(f([5, 3, 99]))"
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
    ).stdout.strip()
    assert out == batch_fingerprint([99, 5, 3])


def test_format_line_canonical_shape() -> None:
    line = format_line(
        254, 4.6012, total=52000, acc=0.0312, lr=3.0e-04, grad_norm=1.23, tok_s=25100, epoch=0, batch=BATCH
    )
    assert line == (
        "step 254/52000 | loss=4.6012 acc=0.0312 lr=0.0003 grad_norm=1.23 tok/s=25100 epoch=0 | "
        "batch: n_seq=12 tokens=7904 len_mean=658.7 len_min=610 len_max=700 pad_frac=0.035 "
        "batch_fp=3f2a9c1d"
    )


def test_format_line_minimal_nonfinite_and_routing() -> None:
    assert format_line(3, float("nan")) == "step 3 | loss=nan"
    line = format_line(3, 1.0, grad_norm=float("inf"), lr=None, seqs=4, len_max=np.int64(9))
    assert line == "step 3 | loss=1.0 grad_norm=inf | batch: n_seq=4 len_max=9"
    assert format_line(1, -float("inf")).endswith("loss=-inf")


@pytest.mark.parametrize("x", [0.1, 1 / 3, 3e-4, 1e-12, 123456789.123456, -2.5e300])
def test_floats_round_trip_exactly(x: float) -> None:
    value = format_line(1, x).split("loss=")[1]
    assert float(value) == x


@pytest.mark.parametrize("kwargs", [{"bad key": 1}, {"batch_fp": "a b"}, {"note": "x|y"}, {"a=b": 3}])
def test_format_line_rejects(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        format_line(1, 1.0, **kwargs)  # type: ignore[arg-type]


def test_jsonl_writer_same_keys(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with JsonlWriter(path) as log:
        log.write(254, 4.6012, total=52000, lr=3e-4, tok_s=25100, batch=BATCH)
        log.write(255, float("nan"), batch={**BATCH, "batch_fp": "00ab"})
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert list(rows[0]) == ["step", "total", "loss", "lr", "tok/s", *BATCH]
    assert rows[0]["batch_fp"] == "3f2a9c1d" and rows[0]["lr"] == 3e-4
    assert math.isnan(rows[1]["loss"]) and rows[1]["batch_fp"] == "00ab"
    buf = io.StringIO()
    JsonlWriter(buf).write(1, 2.0)
    assert json.loads(buf.getvalue()) == {"step": 1, "loss": 2.0}
