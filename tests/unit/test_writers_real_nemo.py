"""Real output of a NeMo training (nemo.core ModelPT, exp_manager, Lightning) run on the CPU, read by default.

fixtures/writers/nemo/ holds two runs of fixtures/writers/gen_nemo.py, each with the console log
(``train.log``: ``> train.log 2>&1``) and what exp_manager wrote (``exp/``: the TensorBoard event file,
hparams.yaml), and the truth its program knew (truth.json): a healthy run and one
whose loss turns NaN in its second epoch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import Report, Severity

RUNS = Path(__file__).resolve().parents[2] / "fixtures" / "writers" / "nemo"
#: exp_manager's TensorBoard logger writes every ``log_every_n_steps`` (5) steps, counted from 0
TB_EVERY = 5


def _report(name: str, what: str) -> tuple[Report, dict]:
    truth = json.loads((RUNS / name / "truth.json").read_text())
    return pipeline.analyze(pipeline.load(str(RUNS / name / what))), truth


def test_the_event_file_of_the_healthy_run_reports_no_problem() -> None:
    pytest.importorskip("tensorboard")
    report, truth = _report("healthy", "exp")
    st = report.run.meta.structure
    assert st is not None and st.epochs == truth["planned_epochs"]
    assert st.last_step == truth["planned_steps"] - 1  # the event file counts steps from 0
    assert st.planned is None and st.ending == "unknown"  # an event file states no plan: none is claimed
    assert report.status == "ok", [(f.code, f.message[:80]) for f in report.problems]


def test_the_event_file_of_the_nan_run_is_an_error_from_the_first_logged_nan() -> None:
    pytest.importorskip("tensorboard")
    report, truth = _report("nan", "exp")
    first = next(f for f in truth["failures"] if f["kind"] == "nan")["step"] - 1  # 0-based, as logged
    (nan,) = [f for f in report.findings if f.code == "LD001"]
    assert nan.severity == Severity.ERROR and nan.first_step is not None
    assert first <= nan.first_step < first + TB_EVERY


@pytest.mark.parametrize("name", ["healthy", "nan"])
def test_the_console_states_the_plan_and_the_end(name: str) -> None:
    report, truth = _report(name, "train.log")
    st = report.run.meta.structure
    assert st is not None and st.planned == truth["planned_steps"] and st.epochs == truth["planned_epochs"]
    # NeMo prints its exp_manager schema at every start ('rank_termination_signal': <Signals.SIGKILL: 9>)
    assert not [f for f in report.findings if f.code == "LD010"]
    if name == "healthy":
        assert st.ending == truth["ending"] and st.last_step == truth["planned_steps"]


def test_the_console_of_the_healthy_run_reads_one_run_with_its_one_fault() -> None:
    """Lightning's bars: the ``Epoch 0`` drawings lack ``val_loss`` and the later ones carry it (two line
    shapes), each step counted from the log's first epoch: one run, no resume, no step written twice
    by another writer. The one problem is true: the program's DataLoader is built with
    ``shuffle=False`` (fixtures/writers/nemo_train.py), so the same batches come in the same order
    every epoch (LD502)."""
    report, truth = _report("healthy", "train.log")
    run = report.run
    assert run.table["step"].to_list() == list(range(1, truth["planned_steps"] + 1))
    assert run.meta.resumes == 0 and not run.earlier
    assert [f.code for f in report.problems] == ["LD502"], [(f.code, f.message[:80]) for f in report.problems]


def test_the_console_of_the_nan_run_finds_the_nan_where_it_began() -> None:
    report, truth = _report("nan", "train.log")
    first = next(f for f in truth["failures"] if f["kind"] == "nan")["step"]
    (nan,) = [f for f in report.findings if f.code == "LD001"]
    assert nan.severity == Severity.ERROR and nan.first_step is not None
    assert first <= nan.first_step <= first + truth["steps_per_epoch"]
    assert not report.run.earlier


def test_a_signal_named_as_a_config_value_is_no_kill() -> None:
    from logdoctor.ingest.parsers.events import _signal

    assert _signal("{'rank_termination_signal': <Signals.SIGKILL: 9>, 'log_level': 'INFO'}") is None
    for said in ("SIGKILL received, exiting", "worker 3 was terminated by SIGKILL", "Signal 9 (SIGKILL) received"):
        sig = _signal(said)
        assert sig is not None and sig.name == "killed", said


def test_a_unit_after_in_or_per_names_no_field() -> None:
    """Lightning/NeMo's bar postfix ``train_step_timing in s=0.0234``: seconds, not llm.c's step key ``s``."""
    from logdoctor.ingest.aliases import FieldMap
    from logdoctor.ingest.parsers.textrules import resolve

    fields = FieldMap()
    assert resolve("train_step_timing in s", fields) == "train_step_timing_in_s"
    assert resolve("tokens per s", fields) == "tokens_per_s"
    assert resolve("s", fields) == "step" and resolve("global step", fields) == "step"
    assert resolve("lm loss", fields) == "loss"


@pytest.mark.parametrize("name", ["healthy", "nan"])
def test_the_consoles_loss_is_the_steps_own_and_read_as_logged(name: str) -> None:
    """Lightning 2.x's bar prints the value logged with ``prog_bar=True``: the step's own loss, no
    running mean (the loss falls fast through the first of three short epochs, which the 1/k slope
    alone took for one). Undoing it as a mean gave negative losses: no running mean, no LD204, and
    the loss the analyses read is the log's."""
    report, _ = _report(name, "train.log")
    st = report.run.meta.structure
    assert st is not None and st.running_mean == ()
    assert "LD204" not in {f.code for f in report.findings}
    loss = report.run.table["loss"].drop_nans().drop_nulls()
    assert loss.min() >= 0  # type: ignore[operator]


@pytest.mark.parametrize("name", ["healthy", "nan"])
def test_the_checkpoint_message_on_the_bars_line_makes_no_column(name: str) -> None:
    """ModelCheckpoint's ``... saving model to '/tmp/.../x.ckpt' as top 3`` lands after the bar's ``]``:
    read apart, its words and path are no column (it was an 'other loss' named after the path)."""
    report, _ = _report(name, "train.log")
    cols = report.run.table.columns
    assert not [c for c in cols if "saving" in c or "ckpt" in c or c == "best"], cols
