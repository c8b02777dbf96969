"""A level change is placed where the level changes, its levels are medians of the rows it names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from logdoctor import pipeline
from logdoctor.model import Finding


def _write(tmp_path: Path, loss: np.ndarray) -> str:
    hist = [{"loss": float(v), "step": k + 1, "epoch": 0.0} for k, v in enumerate(loss)]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"global_step": loss.size, "log_history": hist}))
    return str(path)


def _ld301(path: str) -> list[Finding]:
    return [f for f in pipeline.analyze(pipeline.load(path)).findings if f.code == "LD301"]


def _stated_levels(f: Finding, loss: np.ndarray) -> None:
    """Each 'median X over steps a-b' of the message is the median of those raw rows (steps 1-based)."""
    stated = re.findall(r"median ([\d.]+) over steps (\d+)-(\d+)", f.message)
    assert len(stated) == 2
    for value, a, b in stated:
        assert f"{np.median(loss[int(a) - 1 : int(b)]):.4g}" == value


def test_a_ramp_is_one_change_placed_on_the_ramp(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    loss = np.concatenate([np.full(1500, 2.0), np.linspace(2.0, 6.0, 40), np.full(1460, 6.0)])
    loss = loss * np.exp(rng.normal(0, 0.03, loss.size))
    path = _write(tmp_path, loss)
    (f,) = _ld301(path)
    assert f.first_step is not None and f.last_step is not None
    assert 1490 <= f.first_step <= 1540 and 1500 <= f.last_step <= 1545  # the ramp: steps 1501-1540
    _stated_levels(f, loss)


def test_a_short_dip_inside_a_plateau_is_no_level_change(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    loss = np.full(3000, 20.0)
    loss[1760:1775] = 17.0  # 15 rows lower, then back: the lyric-LoRA 1774 shape
    loss = loss * np.exp(rng.normal(0, 0.05, loss.size))
    assert _ld301(_write(tmp_path, loss)) == []
