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
from logdoctor.renderers.rows import step_range

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


def test_lyric_lora_divergence_covers_only_the_diverged_stretches(reallogs_dir: Path) -> None:
    """The divergence's extent is where the loss is diverged, not its hull (it was steps 92-3000).

    Hand-measured 50-step block means of the raw log_history: 8.33, 8.18 (steps 1-100, the early
    level); 20.98, 13.27 (101-200); 6-8.7 over 201-1150 except 13.91 at 251-300 (one block: shorter
    than the detector's 60-row minimum); 15.90, 11.92 (1201-1300); 19.7-25.3 (1451-2250); 5.9-7.8
    (2301-2550); 10.4-19.1 rising to the end (2551-3000).
    """
    path = reallogs_dir / "hf_trainer_state_lyric_lora_diverged.json"
    rows = [(h["step"], h["loss"]) for h in json.loads(path.read_text())["log_history"] if "loss" in h]
    step = np.array([s for s, _ in rows])
    loss = np.array([v for _, v in rows])
    blocks = {a: float(loss[(step >= a) & (step < a + 50)].mean()) for a in range(1, 3001, 50)}
    assert [round(blocks[a], 2) for a in (1, 51, 101, 151, 251, 1201, 1251, 2551)] == [
        8.33,
        8.18,
        20.98,
        13.27,
        13.91,
        15.90,
        11.92,
        10.39,
    ]
    f = _finding(path, "LD002")
    spans = f.spans or ((f.first_step, f.last_step),)
    assert len(spans) == 4 and (f.first_step, f.last_step) == (spans[0][0], spans[-1][1])

    def covered(a: int) -> float:
        """The share of block a..a+49 inside the finding's spans."""
        return sum(max(0, min(a + 49, y) - max(a, x) + 1) for x, y in spans) / 50

    best = np.minimum.accumulate([blocks[a] for a in sorted(blocks)])
    for i, a in enumerate(sorted(blocks)):
        if covered(a) == 1:  # a block inside a span: diverged, 1.5x above the best block before it
            assert blocks[a] > 1.5 * best[max(0, i - 1)], (a, blocks[a])
        if blocks[a] < 9 and covered(a) > 0:  # a block at the early level (~6-8.7): outside every
            # span, but where a blow-up starts or ends inside it: then its rows in the span are diverged
            inside = np.zeros(step.size, bool)
            for x, y in spans:
                inside |= (step >= max(a, x)) & (step <= min(a + 49, y))
            assert covered(a) <= 0.3 and loss[inside].mean() > 1.5 * best[i - 1], (a, blocks[a], spans)
    # every pair of consecutive blocks above 1.5x the early best (a sustained blow-up) is inside a span
    high = [a for a in sorted(blocks) if blocks[a] > 1.5 * 7.3]
    for a in high:
        if a + 50 in high or a - 50 in high:
            assert covered(a) >= 0.5, (a, blocks[a], spans)
    # and the segments are said: in the finding's step text and in its message
    assert step_range(f) == ", ".join(f"{x}-{y}" for x, y in spans)
    assert f"until step {spans[0][1]}" in f.message and f"from step {spans[-1][0]}" in f.message
    for x, y in spans[1:-1]:
        assert f"{x}-{y}" in f.message
