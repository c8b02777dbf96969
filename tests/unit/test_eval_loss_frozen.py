"""An evaluation loss that holds one value at every evaluation (LD402, constantloss.py): found when each
evaluation is new, silent on a value carried onto every line and on a held-out loss that moves."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.detectors.constantloss import ConstantLossDetector
from logdoctor.model import Finding


def _held_out(tmp_path: Path, val: list[float]) -> list[Finding]:
    """A JSONL run: a training loss moving by noise every step, ``val`` at 10-step evaluations."""
    rng = np.random.default_rng(1)
    rows: list[dict[str, float]] = []
    for s in range(1, 10 * len(val) + 1):
        rows.append({"step": s, "loss": 0.29 + float(rng.normal(0, 0.005))})
        if s % 10 == 0:
            rows.append({"step": s, "val_loss": val[s // 10 - 1]})
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    found = ConstantLossDetector().analyze(pipeline.load(str(path))).findings
    return [f for f in found if f.evidence.get("held_out")]


def _wobble(level: float, rel: float, n: int = 9) -> list[float]:
    """``n`` distinct values spanning ``rel`` of ``level`` (YOLOv5's val losses to 5 digits)."""
    return [round(level * (1 + rel * ((k * 7) % n) / (n - 1)), 7) for k in range(n)]


@pytest.mark.parametrize(("rel", "found"), [(3.4e-4, True), (9e-4, True), (2e-3, False)])
def test_a_held_out_loss_at_one_value_over_new_evaluations_is_a_plateau(
    tmp_path: Path, rel: float, found: bool
) -> None:
    """YOLOv5n from scratch whose val loss holds 0.2599 to 4 digits at 9 epochs; the rule's 1e-3 of the
    level sits fifty times below the closest healthy eval loss (5.7% over its run)."""
    hits = _held_out(tmp_path, _wobble(0.2599, rel))
    assert bool(hits) is found
    if found:
        assert hits[0].code == "LD402" and hits[0].severity.name == "WARNING" and hits[0].evidence["evals"] == 9


def test_one_evaluation_carried_onto_every_line_is_no_plateau(tmp_path: Path) -> None:
    """NeMo prints its last val_loss on every training line: 30 equal values are one evaluation."""
    assert _held_out(tmp_path, [1.619] * 30) == []


def test_a_moving_held_out_loss_and_too_few_evaluations_are_no_plateau(tmp_path: Path) -> None:
    assert _held_out(tmp_path, [2.0 * math.exp(-k / 5) + 0.5 for k in range(20)]) == []
    assert _held_out(tmp_path, _wobble(0.2599, 3e-4, n=7)) == []  # fewer than 8 evaluations
