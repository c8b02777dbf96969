"""Messages carry the digits their numbers have, in phrases that read (issue 28, point 9)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from logdoctor import pipeline
from logdoctor.detectors.spikes import times
from logdoctor.renderers.evidence import evidence_sentences


def test_ratio_digits() -> None:
    assert times(773.8) == "774x" and times(1.6143) == "1.61x" and times(12345.6) == "12,346x"


def test_spike_over_a_tiny_median_keeps_three_digits(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    loss = 0.0005 * np.exp(rng.normal(0, 0.05, 400))
    loss[300] = 0.3869  # the t5 memorisation run: 0.3869 over a local median of 0.0005
    hist = [{"loss": float(v), "step": k + 1, "epoch": 0.0} for k, v in enumerate(loss)]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"global_step": 400, "log_history": hist}))
    spikes = [f for f in pipeline.analyze(pipeline.load(str(path))).findings if f.code == "LD101"]
    assert spikes and all(".00x" not in f.message and ".80x" not in f.message for f in spikes)
    top = next(f for f in spikes if f.first_step == 301)
    ratio = float(top.evidence["ratio"])
    assert f", {times(ratio)} the local median" in top.message and len(times(ratio).rstrip("x")) <= 5


def test_epoch_source_reads_after_from_the() -> None:
    stated = evidence_sentences({"epochs": 3, "steps_per_epoch": 100, "epoch_source": "log's own statement"})
    assert stated == ["3 epochs of 100 steps (from the log's own statement)"]


def test_a_given_epoch_length_is_phrased(tmp_path: Path) -> None:
    """``--steps-per-epoch``: 'from the --steps-per-epoch value', not 'from the given (...)'."""
    path = tmp_path / "train.log"
    path.write_text("\n".join(f"step {k} loss {3 - k / 200:.4f}" for k in range(1, 301)) + "\n")
    report = pipeline.analyze(pipeline.load(str(path), steps_per_epoch=100))
    said = " ".join(evidence_sentences(report.verdict.evidence))
    assert "(from the --steps-per-epoch value)" in said and "from the given" not in said
