"""How each run ended against its plan: finished, early-stopped, stopped before its plan with no message, unknown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import Report, Severity
from logdoctor.renderers.jsonreport import JsonRenderer
from logdoctor.renderers.rows import facts


def _report(tmp_path: Path, lines: list[str], name: str = "train.log") -> Report:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return pipeline.analyze(pipeline.load(str(path)))


def _steps(last: int, planned: int | None, every: int = 50) -> list[str]:
    total = f"/{planned}" if planned else ""
    return [f"step {k}{total} | loss {3 - k / (4 * last):.4f}" for k in range(every, last + 1, every)]


def _ending(report: Report) -> tuple[str, str | None]:
    st = report.meta.structure
    assert st is not None
    return st.ending, st.ending_source


def test_a_silent_stop_before_the_plan_is_a_warning_in_the_headline(tmp_path: Path) -> None:
    report = _report(tmp_path, _steps(6200, 10000))
    assert _ending(report) == ("stopped", "planned column")
    found = [f for f in report.findings if f.code == "LD016"]
    assert len(found) == 1 and found[0].severity is Severity.WARNING
    assert "stopped at step 6,200 of 10,000 (62%), no error printed" in found[0].message
    assert report.status == "warning"
    assert dict(facts(report))["ending"].startswith("stopped before its plan, no error printed")


def test_the_plan_reached_is_finished_and_silent(tmp_path: Path) -> None:
    report = _report(tmp_path, _steps(10000, 10000))
    assert _ending(report) == ("finished", "planned column")
    assert not [f for f in report.findings if f.code in ("LD010", "LD016", "LD017")]


def test_no_plan_is_an_unknown_ending_not_a_stop(tmp_path: Path) -> None:
    report = _report(tmp_path, _steps(6200, None))
    assert _ending(report) == ("unknown", None)
    assert not [f for f in report.findings if f.code == "LD016"]
    assert dict(facts(report))["ending"] == "unknown; no planned length stated"


def test_a_plan_in_a_config_dump(tmp_path: Path) -> None:
    report = _report(tmp_path, ["config: {'max_steps': 10000, 'lr': 0.001}", *_steps(6200, None)])
    assert _ending(report) == ("stopped", "planned config")
    report = _report(tmp_path, ["config: {'max_steps': 10000}", *_steps(6200, None), "Training finished"])
    assert _ending(report)[0] == "finished"


def test_keras_epochs_stopped_early_by_the_message(tmp_path: Path) -> None:
    lines = []
    for e in range(1, 24):
        lines += [
            f"Epoch {e}/100",
            f"10/10 [==============================] - 1s 5ms/step - loss: {1 / e:.4f} - val_loss: {1 / e + 0.1:.4f}",
        ]
    lines.append("Epoch 00023: early stopping")
    report = _report(tmp_path, lines)
    assert _ending(report) == ("early_stopped", f"line {len(lines)}")
    found = [f for f in report.findings if f.code == "LD017"]
    assert len(found) == 1 and found[0].severity is Severity.INFO
    assert not [f for f in report.findings if f.code == "LD016"]


def _eval_log(best: int, evals: int, patience: int | None) -> list[str]:
    head = [f"config: early_stopping_patience={patience}"] if patience else []
    lines = [*head]
    for i in range(1, evals + 1):
        lines += [f"step {i * 100 - 50}/10000 | loss {2 - i / 100:.4f}"]
        lines += [f"step {i * 100}/10000 | loss {2 - i / 90:.4f}"]
        val = 1.0 - i / 100 if i <= best else 1.0 - best / 100 + (i - best) / 50
        lines.append(f"eval step {i * 100} | eval_loss {val:.4f}")
    return lines


def test_early_stopping_recognised_from_the_pattern_when_patience_is_stated(tmp_path: Path) -> None:
    report = _report(tmp_path, _eval_log(best=17, evals=20, patience=3))
    ending, source = _ending(report)
    assert ending == "early_stopped" and source is not None and source.startswith("patience 3")
    # one evaluation more or less than the patience: a silent stop
    assert _ending(_report(tmp_path, _eval_log(best=16, evals=20, patience=3)))[0] == "stopped"
    assert _ending(_report(tmp_path, _eval_log(best=17, evals=20, patience=None)))[0] == "stopped"


def _done_log(best: int, evals: int, head: str | None) -> list[str]:
    """An eval log with no planned length that ends with Marian's end-of-training line."""
    lines = _eval_log(best, evals, None)
    lines = [line.replace("/10000", "") for line in lines]
    return [*([head] if head else []), *lines, "[2019-03-14 01:49:18] Training finished"]


@pytest.mark.parametrize("head", ["[2019-03-11 23:26:12] [config] early-stopping: 3", "marian --early-stopping 3"])
def test_an_end_line_at_the_stated_patience_is_an_early_stop(tmp_path: Path, head: str) -> None:
    """Marian prints 'Training finished' however its loop ended: with early stopping stated (its config
    dump's ``early-stopping: N`` or ``--early-stopping N``) and the best eval exactly N evals before the
    end, it was the early stop; one eval more or less, or no patience stated, it finished."""
    ending, source = _ending(_report(tmp_path, _done_log(best=17, evals=20, head=head)))
    assert ending == "early_stopped" and source is not None and "patience 3" in source
    assert source.endswith(" 3 evaluations before") and "(" not in source  # the count, then the series named
    assert _ending(_report(tmp_path, _done_log(best=16, evals=20, head=head)))[0] == "finished"
    assert _ending(_report(tmp_path, _done_log(best=17, evals=20, head=None)))[0] == "finished"


def test_a_checkpoint_snapshot_of_trainer_state_is_unknown_not_stopped(tmp_path: Path) -> None:
    history = [{"loss": 2.0 - i / 100, "learning_rate": 1e-4, "epoch": i / 10, "step": i * 10} for i in range(1, 31)]
    state = {"global_step": 300, "max_steps": 1000, "epoch": 3.0, "log_history": history}
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps(state, indent=2))
    report = pipeline.analyze(pipeline.load(str(path)))
    assert _ending(report) == ("unknown", None)
    done = [*history, {"train_runtime": 12.0, "step": 300, "epoch": 3.0}]
    path.write_text(json.dumps({**state, "log_history": done}, indent=2))
    report = pipeline.analyze(pipeline.load(str(path)))
    assert _ending(report)[0] == "finished"


def _stopped_state(counter: int, patience: int, *, done: bool = True) -> dict[str, object]:
    """A trainer_state.json of a run that stopped at step 300 of 1000 with the EarlyStoppingCallback
    state transformers saves (trainer_callback.py EarlyStoppingCallback.state)."""
    history: list[dict[str, float]] = [
        {"loss": 2.0 - i / 100, "learning_rate": 1e-4, "epoch": i / 10, "step": i * 10} for i in range(1, 31)
    ]
    history += [{"eval_loss": 1.5 + abs(i - 2) / 10, "epoch": i, "step": i * 50} for i in range(1, 7)]
    history.sort(key=lambda e: e["step"])
    if done:
        history.append({"train_runtime": 12.0, "step": 300, "epoch": 3.0})
    callbacks = {
        "EarlyStoppingCallback": {
            "args": {"early_stopping_patience": patience, "early_stopping_threshold": 0.0},
            "attributes": {"early_stopping_patience_counter": counter},
        }
    }
    return {
        "global_step": 300,
        "max_steps": 1000,
        "epoch": 3.0,
        "stateful_callbacks": callbacks,
        "log_history": history,
    }


def test_hf_early_stopping_callback_state_is_an_early_stop(tmp_path: Path) -> None:
    """HF's EarlyStoppingCallback stops the loop when its counter reaches its patience; the saved state
    says so, though the log prints no line: early-stopped, not finished (the train_runtime entry) and
    not a silent stop."""
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps(_stopped_state(4, 4)))
    ending, source = _ending(pipeline.analyze(pipeline.load(str(path))))
    assert ending == "early_stopped" and source is not None and source.startswith("line ")
    # must not: a counter short of its patience did not stop the run (it ended for another reason)
    path.write_text(json.dumps(_stopped_state(2, 4)))
    assert _ending(pipeline.analyze(pipeline.load(str(path))))[0] == "finished"
    # must not: a snapshot saved during training (no train_runtime entry) has not ended
    path.write_text(json.dumps(_stopped_state(4, 4, done=False)))
    assert _ending(pipeline.analyze(pipeline.load(str(path))))[0] == "unknown"


def test_json_and_html_say_the_ending_and_the_plan(tmp_path: Path) -> None:
    report = _report(tmp_path, _steps(6200, 10000))
    doc = json.loads(JsonRenderer().render(report))
    st = doc["structure"]
    assert (st["ending"], st["ending_source"], st["planned"], st["planned_source"]) == (
        "stopped",
        "planned column",
        10000,
        "column",
    )
    from logdoctor.renderers.html import HtmlRenderer

    page = HtmlRenderer().render(report)
    assert "stopped before its plan, no error printed" in str(page)


def test_a_stop_on_a_time_budget_is_a_designed_early_stop_not_a_silent_one(tmp_path: Path) -> None:
    """A run capped by wall clock says so as it stops (Lightning's Timer, scripts' 'stopping early'):
    early-stopped (info), not 'stopped before its plan, no error printed'."""
    for said in (
        "stopping_early: wallclock_cap train_time:600123ms step:6200/10000",
        "Time limit reached. Elapsed time is 0:10:00. Signaling Trainer to stop.",
    ):
        report = _report(tmp_path, [*_steps(6200, 10000), said])
        assert _ending(report)[0] == "early_stopped"
        assert not [f for f in report.findings if f.code == "LD016"]
    # a config key that names early stopping is no stop
    report = _report(tmp_path, ["config: {'early_stopping': True, 'max_steps': 10000}", *_steps(6200, None)])
    assert _ending(report)[0] == "stopped"


def test_an_epoch_table_ending_n_evals_after_its_best_without_a_stated_patience_is_unknown(tmp_path: Path) -> None:
    """A Keras CSVLogger table with no planned length and no patience whose best val_loss is 10 epochs
    before its end (the pattern an EarlyStopping(patience=10) leaves, and also a 29-epoch plan's):
    the ending is unknown, not an invented early stop."""
    rows = [f"{e},{2.0 / (e + 1):.5f},{0.5 + abs(e - 18) / 50:.5f}" for e in range(29)]
    table = ["epoch,loss,val_loss", *rows]
    assert _ending(_report(tmp_path, table, "training_log.csv")) == ("unknown", None)
