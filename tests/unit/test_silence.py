"""Silence on healthy runs: no spike, grad-norm, lr or step-time warning on any healthy real log."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.detectors.spikenull import run_p_value
from logdoctor.detectors.spikes import SpikeDetector
from tests.unit.synth import make_run

#: Finding codes this suite holds to silence (the spike, lr-schedule and step-time blocks).
GUARDED = ("LD1", "LD6", "LD7")


def healthy_real_logs(reallogs: Path) -> list[str]:
    """Real logs whose MANIFEST entry records no known anomaly."""
    with (reallogs / "MANIFEST.tsv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    ok = ("none", "no loss anomalies")
    return [r["file"] for r in rows if r["known_anomalies"].strip().strip('"').lower().startswith(ok)]


@pytest.mark.reallogs
def test_every_healthy_real_run_gives_no_spike_lr_or_step_time_warning(reallogs_dir: Path) -> None:
    names = healthy_real_logs(reallogs_dir)
    assert len(names) >= 15
    for name in names:
        report = pipeline.analyze(pipeline.load(str(reallogs_dir / name)))
        loud = [f.code for f in report.findings if f.code.startswith(GUARDED) and f.severity.label != "info"]
        assert loud == [], name


@pytest.mark.reallogs
def test_one_noisy_step_in_joeynmt_is_information(reallogs_dir: Path) -> None:
    """joeynmt logs a single batch's loss (noisy by design): its one 1.51x step is not a warning."""
    report = pipeline.analyze(pipeline.load(str(reallogs_dir / "joeynmt_signwriting_multilingual_train.log")))
    spikes = [f for f in report.findings if f.code == "LD101"]
    assert spikes and all(f.severity.label == "info" for f in spikes)


def test_student_t_null_false_positive_rate_is_at_most_alpha() -> None:
    """Heavy-tailed null: Student-t(4) log-noise on a falling curve; at most ~1% of runs warn."""
    rng = np.random.default_rng(5)
    warned = 0
    runs = 100
    for _ in range(runs):
        t = np.arange(2000)
        loss = (2 + 8 * np.exp(-t / 300)) * np.exp(0.02 * rng.standard_t(4, 2000))
        found = SpikeDetector().analyze(make_run(loss)).findings
        warned += any(f.severity.label != "info" for f in found)
    assert warned <= 3  # alpha = 1%: 3 of 100 allows for sampling error


def test_null_p_value_grows_with_run_length() -> None:
    assert run_p_value(12.0, 100, 4.0) < run_p_value(12.0, 10_000, 4.0)
    assert run_p_value(80.0, 100_000, 4.0) < 0.01


def test_a_real_blow_up_is_still_a_warning() -> None:
    from tests.unit.synth import healthy

    loss = healthy(2000, 31, noise=0.03)
    loss[1000] *= 10
    (f,) = [f for f in SpikeDetector().analyze(make_run(loss)).findings if f.code == "LD101"]
    assert f.severity.label == "warning" and f.evidence["null_p_value"] <= 0.01
