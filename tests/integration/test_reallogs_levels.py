"""Levels in detector messages re-read from the raw lines of real logs (../shared/reallogs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.config import AnalysisConfig
from logdoctor.model import Finding

pytestmark = pytest.mark.reallogs


def _finding(path: Path, code: str, cfg: AnalysisConfig | None = None) -> Finding:
    found = [f for f in pipeline.analyze(pipeline.load(str(path)), cfg).findings if f.code == code]
    assert len(found) == 1
    return found[0]


def test_mistral_plateau_levels_are_the_medians_of_the_rows_they_name(reallogs_dir: Path) -> None:
    path = reallogs_dir / "hf_trl_trainer_state_mistral7b_medical_gbl_false.json"
    rows = [(h["step"], h["loss"]) for h in json.loads(path.read_text())["log_history"] if "loss" in h]
    loss = np.array([v for _, v in rows])
    k = max(3, loss.size // 10)
    # after its first fall the loss moves 10% (2.05 -> 1.84): no plateau under the default 5% (healthy
    # real runs move 8-10%, issue 29); a 20% threshold makes LD402 speak, and its numbers are tested
    f = _finding(path, "LD402", AnalysisConfig(options={"drops": {"min_improvement": 0.2}}))
    # the log goes 3.911 -> ~1.89: the first fall is named, and each level is the median of the
    # rows the message names (steps 25-1600 and 14475-16050 of the raw log_history)
    assert f"After its first fall (from {loss[0]:.4g} at step {rows[0][0]})" in f.message
    head = f"median {np.median(loss[:k]):.4g} over its first {k} rows (steps {rows[0][0]}-{rows[k - 1][0]})"
    tail = f"median {np.median(loss[-k:]):.4g} over its last {k} rows (steps {rows[-k][0]}-{rows[-1][0]})"
    assert head in f.message and tail in f.message


def test_marian_overfitting_train_level_is_from_the_resumed_segment(reallogs_dir: Path) -> None:
    path = reallogs_dir / "marian_encs_bt_multi_resume.log"
    lines = path.read_text().splitlines()
    last_start = max(i for i, ln in enumerate(lines) if ln.endswith("] Training started"))
    cost = re.compile(r"\] Ep\. \d+ : Up\. (\d+) : .* : Cost ([\d.]+)")
    seg = [(int(m[1]), float(m[2])) for ln in lines[last_start:] if (m := cost.search(ln))]
    upto_best = [c for s, c in seg if s <= 1175000]  # the eval's best step; rows of the last run
    f = _finding(path, "LD410")
    assert f.first_step == 1175000
    assert f"kept falling ({np.median(upto_best):.4g} -> " in f.message
    assert "2.608" not in f.message  # the level before the resume (the old message's number)


def test_lyric_lora_second_blow_up_is_placed_where_block_means_climb(reallogs_dir: Path) -> None:
    path = reallogs_dir / "hf_trainer_state_lyric_lora_diverged.json"
    rows = [(h["step"], h["loss"]) for h in json.loads(path.read_text())["log_history"] if "loss" in h]
    step = np.array([s for s, _ in rows])
    loss = np.array([v for _, v in rows])
    # hand-measured 25-step block means (issue 28): 5.94 (1401-1425), 8.75 (1426-1450),
    # 16.96 (1451-1475), 22.52 (1476-1500): the level climbs over steps 1426-1500
    blocks = [float(loss[(step > a) & (step <= a + 25)].mean()) for a in (1400, 1425, 1450, 1475)]
    assert [round(b, 2) for b in blocks] == [5.94, 8.75, 16.96, 22.52]
    ups = [f for f in pipeline.analyze(pipeline.load(str(path))).findings if f.code == "LD301"]
    climb = [f for f in ups if (f.first_step or 0) <= 1500 and (f.last_step or 0) >= 1426]
    assert len(climb) == 1 and 1426 <= (climb[0].first_step or 0) <= 1475
    assert not [f for f in ups if 1550 <= (f.first_step or 0) <= 2200]  # mid-plateau (was 1774)
    for value, a, b in re.findall(r"median ([\d.]+) over steps (\d+)-(\d+)", climb[0].message):
        assert f"{np.median(loss[(step >= int(a)) & (step <= int(b))]):.4g}" == value
