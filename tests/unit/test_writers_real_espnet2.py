"""Real ESPnet2 ``exp/*/train.log`` files (espnet2.bin.lm_train run on the CPU), read by default.

fixtures/writers/espnet2/ holds two char-level LM trainings made by fixtures/writers/gen_espnet.py, framed
as Kaldi's run.pl frames a recipe's job log, each with the truth read back from the trainer's own
checkpoint (truth.json): one that finishes its ``--max_epoch 3``, one that ``--patience 1`` stops early.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import Report, Severity

RUNS = Path(__file__).resolve().parents[2] / "fixtures" / "writers" / "espnet2"


def _report(name: str) -> tuple[Report, dict]:
    truth = json.loads((RUNS / name / "truth.json").read_text())
    return pipeline.analyze(pipeline.load(str(RUNS / name / "train.log"))), truth


@pytest.mark.parametrize("name", ["finished", "early_stopped"])
def test_epochs_plan_and_ending_agree_with_the_trainer(name: str) -> None:
    report, truth = _report(name)
    run, st = report.run, report.run.meta.structure
    assert st is not None
    assert st.epochs == truth["epochs_run"]
    # the plan: ESPnet's "N/Mepoch started" lines (trainer.py run), in epochs, as steps of the counter
    assert st.planned_epochs == truth["planned_epochs"]
    assert st.planned == truth["planned_epochs"] * truth["batches_per_epoch"]
    assert st.ending == truth["ending"]
    assert "lr" in run.table.columns  # optim0_lr0
    # one [valid] evaluation an epoch, its loss as the trainer's reporter kept it (3 decimals in the log)
    assert run.evals["val_loss"].to_list() == pytest.approx(truth["valid_loss_by_epoch"], abs=6e-4)


def test_the_finished_run_reports_no_problem() -> None:
    report, truth = _report("finished")
    assert report.run.table.height == 3 * truth["batches_per_epoch"] // 10  # the default log interval: 10
    assert report.status == "ok", [(f.code, f.message[:80]) for f in report.problems]


def test_early_stopping_is_an_ending_not_a_problem() -> None:
    report, truth = _report("early_stopped")
    (stop,) = [f for f in report.findings if f.code == "LD017"]
    epochs = truth["epochs_run"] * truth["batches_per_epoch"]
    assert stop.severity == Severity.INFO and stop.first_step == epochs
    assert report.status == "ok", [(f.code, f.message[:80]) for f in report.problems]


def test_a_sentence_before_a_number_names_no_metric() -> None:
    """The early-stopping line's count of epochs (``valid.loss has not been improved 2 epochs``) is no
    evaluation; metric names, and a phrase whose only verb ends it, stay keys."""
    from logdoctor.ingest.parsers.textrules import key_phrase

    assert key_phrase("[Early stopping] valid.loss has not been improved ") is None
    assert key_phrase("the training was stopped at ") is None
    assert key_phrase(" | lm loss: ") == "lm loss"
    assert key_phrase("loss is ") == "loss is"
    assert key_phrase("iter_time=0.004, forward_time=") == "forward_time"
