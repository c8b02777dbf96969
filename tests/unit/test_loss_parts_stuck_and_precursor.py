"""A loss part frozen at one exactly printed value to the end (LD402 warning, constantloss.py), and the
loss spike before the first non-finite loss (LD101, nanprecursor.py): each found, and silent on
healthy runs and their confounders."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from logdoctor import pipeline
from logdoctor.detectors.constantloss import frozen_tail, printed_quantum
from logdoctor.model import Report


def _jsonl(tmp_path: Path, rows: list[dict[str, float]]) -> Report:
    p = tmp_path / "log.json"
    p.write_text("".join(json.dumps({"mode": "train", "iter": 50 * (i + 1), **r}) + "\n" for i, r in enumerate(rows)))
    return pipeline.analyze(pipeline.load(str(p)))


def _healthy_parts(n: int, seed: int = 0) -> list[dict[str, float]]:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    cls = 1.1 * np.exp(-t / 60) + 0.3 + rng.normal(0, 0.02, n)
    box = 0.9 * np.exp(-t / 80) + 0.2 + rng.normal(0, 0.02, n)
    pairs = zip(cls, box, strict=True)
    return [{"loss_cls": round(a, 5), "loss_bbox": round(b, 5), "loss": round(a + b, 5)} for a, b in pairs]


def test_printed_quantum_is_the_last_digit_the_log_wrote() -> None:
    assert printed_quantum(21.83414) == 1e-5
    assert printed_quantum(0.0012) == 1e-4
    assert printed_quantum(3.0) == 1.0


def test_frozen_tail_needs_rows_and_digits() -> None:
    moving = np.array([1.2, 1.1, 1.3, 1.05])
    assert frozen_tail(np.r_[moving, np.full(8, 21.83414)], 8, 1e-4) == 4
    assert frozen_tail(np.r_[moving, np.full(7, 21.83414)], 8, 1e-4) is None  # too few rows
    assert frozen_tail(np.r_[moving, np.full(20, 0.0012)], 8, 1e-4) is None  # 4 decimals of 0.0012: rounding


def test_a_loss_part_frozen_after_the_loss_went_nan_is_stuck(tmp_path: Path) -> None:
    rows = _healthy_parts(9)
    rows += [{"loss_cls": 21.83414, "loss_bbox": float("nan"), "loss": float("nan")} for _ in range(40)]
    r = _jsonl(tmp_path, rows)
    stuck = [f for f in r.findings if f.code == "LD402" and f.severity.label == "warning"]
    assert len(stuck) == 1 and "`loss_cls` is exactly 21.83414" in stuck[0].message
    assert stuck[0].first_step == 500 and stuck[0].evidence["rows"] == 40


def test_healthy_parts_and_a_coarsely_printed_small_part_are_not_stuck(tmp_path: Path) -> None:
    rows = _healthy_parts(200)
    for i, row in enumerate(rows):
        row["loss_aux"] = 0.0012 if i > 100 else 0.0013  # printed to 4 decimals: repeats by rounding
    r = _jsonl(tmp_path, rows)
    assert not [f for f in r.findings if f.code == "LD402" and f.severity.label == "warning"]


def test_a_part_climbing_before_the_nan_is_a_spike_before_it(tmp_path: Path) -> None:
    rows = _healthy_parts(8)
    rows[7]["loss_cls"] = 1.947  # 1.7x the highest it had been
    rows += [{"loss_cls": 16.4, "loss_bbox": float("nan"), "loss": float("nan")} for _ in range(5)]
    r = _jsonl(tmp_path, rows)
    pre = [f for f in r.findings if f.code == "LD101" and "before the loss turned NaN" in f.message]
    assert len(pre) == 1 and pre[0].first_step == 400 and pre[0].evidence["column"] == "loss_cls"


def test_a_nan_without_a_rise_before_it_has_no_precursor(tmp_path: Path) -> None:
    # must not: the loss falls as usual and turns NaN at once (a bad batch, an fp16 overflow)
    rows = _healthy_parts(30) + [{"loss_cls": float("nan"), "loss_bbox": float("nan"), "loss": float("nan")}] * 5
    r = _jsonl(tmp_path, rows)
    assert any(f.code == "LD001" for f in r.findings)
    assert not [f for f in r.findings if f.code == "LD101"]


def test_a_loss_climbing_row_after_row_to_the_nan_is_no_precursor_spike(tmp_path: Path) -> None:
    # must not: divergence (each row a new high) is LD002's, not a sudden spike before the NaN
    rows = _healthy_parts(30)
    for i in range(10):
        rows.append({"loss_cls": 0.4 * 1.5**i, "loss_bbox": 0.3 * 1.5**i, "loss": 0.7 * 1.5**i})
    rows += [{"loss_cls": float("nan"), "loss_bbox": float("nan"), "loss": float("nan")}] * 3
    r = _jsonl(tmp_path, rows)
    assert not [f for f in r.findings if f.code == "LD101" and "before the loss turned NaN" in f.message]
