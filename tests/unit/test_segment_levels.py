"""Levels in messages come from the rows of the segment they describe, stated with their smoothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from logdoctor import pipeline
from logdoctor.model import Finding


def _state(tmp_path: Path, loss: list[float], evals: dict[int, float] | None = None, every: int = 10) -> str:
    hist: list[dict[str, float]] = [
        {"loss": v, "learning_rate": 1e-5, "epoch": k / len(loss), "step": (k + 1) * every} for k, v in enumerate(loss)
    ]
    hist += [{"eval_loss": v, "epoch": 0.5, "step": s} for s, v in (evals or {}).items()]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"global_step": len(loss) * every, "log_history": hist}))
    return str(path)


def _find(path: str, code: str) -> Finding:
    found = [f for f in pipeline.analyze(pipeline.load(path)).findings if f.code == code]
    assert len(found) == 1, [f.code for f in pipeline.analyze(pipeline.load(path)).findings]
    return found[0]


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+\.\d+", text)]


def test_plateau_after_a_first_fall_says_so_with_the_rows_of_each_level(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    loss = [5.0, 3.5, 2.6, *(2.1 - 0.1 * np.linspace(0, 1, 297) + rng.normal(0, 0.02, 297))]
    f = _find(_state(tmp_path, loss), "LD402")
    k = len(loss) // 10
    head, tail = float(np.median(loss[:k])), float(np.median(loss[-k:]))
    assert f.message.startswith("After its first fall (from 5 at step 10)")
    assert f"median {head:.4g} over its first {k} rows (steps 10-{k * 10})" in f.message
    assert f"median {tail:.4g} over its last {k} rows" in f.message


def test_plateau_that_rises_says_higher(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    loss = list(2.0 + 0.05 * np.linspace(0, 1, 300) + rng.normal(0, 0.01, 300))
    f = _find(_state(tmp_path, loss), "LD402")
    assert "% higher" in f.message and "-" not in f.message.split("higher")[0].split(",")[-1]
    assert "The loss barely moved over the whole run" in f.message


def test_overfitting_train_levels_never_reach_back_past_a_resume(tmp_path: Path) -> None:
    """Steps 10-1000 fall 3.0 -> 2.6; the run resumes at step 1010 (counter goes back to 1010
    after 1500) with its loss at 2.1, falling to 1.8; the eval is best at 1100 and then rises."""
    first = list(np.linspace(3.0, 2.6, 150))  # steps 10-1500
    second = list(np.linspace(2.1, 1.8, 150))  # steps 1010-2500 after the resume
    hist = [{"loss": v, "step": (k + 1) * 10, "epoch": 0.0} for k, v in enumerate(first)]
    hist += [{"loss": v, "step": 1010 + k * 10, "epoch": 0.0} for k, v in enumerate(second)]
    evals = {1050: 1.6, 1100: 1.5, 1300: 1.6, 1600: 1.7, 2000: 1.8, 2500: 1.9}
    hist += [{"eval_loss": v, "step": s, "epoch": 0.0} for s, v in evals.items()]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"global_step": 2500, "log_history": hist}))
    run = pipeline.load(str(path))
    assert run.meta.resume_steps == (1010,)
    f = _find(str(path), "LD410")
    rows_1010_1100 = second[:10]  # steps 1010..1100 of the resumed run
    assert f"{np.median(rows_1010_1100):.4g} -> " in f.message
    assert "median" in f.message and "rows up to each" in f.message
    before = [v for v in first if v > 2.55]
    assert not any(abs(x - float(np.median(before[-15:]))) < 1e-3 for x in _numbers(f.message))


def test_divergence_names_each_later_blow_up(tmp_path: Path) -> None:
    """Loss 2 -> blow-up to 8 (rows 200-300) -> back to 2 -> blow-up to 9 (rows 600-800) -> back to
    1.8 to the end: the second blow-up is named in the LD002 message, not skipped."""
    rng = np.random.default_rng(5)
    loss = np.full(1000, 2.0)
    loss[200:300] = 8.0
    loss[600:800] = 9.0
    loss[800:] = 1.8
    loss = loss * np.exp(rng.normal(0, 0.02, loss.size))
    f = _find(_state(tmp_path, list(loss), every=1), "LD002")
    assert f.evidence["later_stretches"] == 1
    m = re.search(r"again over steps (\d+)-(\d+)", f.message)
    assert m is not None and 590 <= int(m[1]) <= 640 and 780 <= int(m[2]) <= 830
