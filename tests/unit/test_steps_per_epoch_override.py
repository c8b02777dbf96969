"""--steps-per-epoch wins over the epoch column for where the diagnosis puts epoch boundaries."""

from __future__ import annotations

from pathlib import Path

from logdoctor import pipeline
from logdoctor.config import AnalysisConfig

LOG = Path(__file__).resolve().parents[2] / "fixtures" / "sim" / "loss_only_sorted.log"


def test_logged_epochs_are_used_when_nothing_is_given() -> None:
    run = pipeline.load(str(LOG))
    assert not run.meta.steps_per_epoch_given
    v = pipeline.analyze(run).verdict
    assert v.batching == "sorted" and v.evidence["epoch_source"] == "epoch column"


def test_a_given_epoch_length_is_used_and_says_so() -> None:
    run = pipeline.load(str(LOG), steps_per_epoch=50)
    assert run.meta.steps_per_epoch_given and run.meta.steps_per_epoch == 50
    v = pipeline.analyze(run).verdict
    assert v.evidence["steps_per_epoch"] == 50 and v.evidence["epoch_source"] == "--steps-per-epoch value"
    # a wrong epoch length hides the epoch sawtooth: the loss alone then cannot decide
    assert v.batching == "inconclusive"


def test_analyze_config_override_marks_it_given() -> None:
    report = pipeline.analyze(pipeline.load(str(LOG)), AnalysisConfig(steps_per_epoch=98))
    assert report.run.meta.steps_per_epoch_given and report.series.steps_per_epoch == 98
    assert report.verdict.batching == "sorted"
