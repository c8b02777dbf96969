"""W&B run folders written by the real ``wandb`` in offline mode (no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("wandb", reason="the [wandb] extra is not installed")

from fixtures.trackers import BUCKETED, run_table, write_csv, write_wandb
from logdoctor import pipeline
from logdoctor.cli import main


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wb")
    table = run_table()
    write_csv(table, root / "static.csv")
    write_wandb(table, root)
    write_wandb(run_table(BUCKETED), root)
    write_wandb(table.head(300), root, mode="output")
    return root


def _runs(root: Path) -> list[Path]:
    return sorted((root / "wandb").glob("offline-run-*"))


def test_static_run_matches_its_csv_export(root: Path) -> None:
    csv = pipeline.analyze(pipeline.load(str(root / "static.csv")))
    wb = pipeline.analyze(pipeline.load(str(_runs(root)[0])))
    assert wb.meta.format == "wandb"
    assert wb.series.steps == csv.series.steps == run_table().height
    assert wb.series.columns == csv.series.columns
    assert wb.series.epochs == csv.series.epochs == 8
    assert wb.verdict.batching == csv.verdict.batching == "static"


def test_namespaced_keys_and_eval_series(root: Path) -> None:
    run = pipeline.load(str(_runs(root)[0]))
    assert run.table["step"][0] == 1  # train/global_step, not W&B's 0-based _step
    assert run.has("epoch") and run.has("lr") and run.has("grad_norm")
    assert run.evals["eval_loss"].len() == run.n_steps // 100
    assert not {"runtime", "timestamp", "_step"} & set(run.table.columns)


def test_config_facts_name_their_source(root: Path) -> None:
    facts = {f.name: f for f in pipeline.load(str(_runs(root)[0])).meta.config_facts}
    assert facts["epochs"].value == 8 and facts["epochs"].source == "wandb config num_train_epochs"
    assert facts["grad_accum"].value == 4
    assert facts["group_by_length"].value is False
    assert facts["lr_schedule"].value == "cosine"
    assert "max_steps" not in facts  # HF's -1 means "not set"


def test_wandb_folder_is_every_run_and_latest_run_is_one(root: Path) -> None:
    outcomes = pipeline.analyze_paths([str(root / "wandb")], jobs=1)
    assert [o.path for o in outcomes] == [str(p) for p in _runs(root)]
    assert [o.report.verdict.batching for o in outcomes if o.report][:2] == ["static", "healthy"]
    latest = pipeline.analyze_paths([str(root / "wandb" / "latest-run")], jobs=1)
    assert len(latest) == 1 and latest[0].report is not None
    assert latest[0].report.series.steps == 300  # the output-only run was the last


def test_console_output_is_read_when_there_is_no_history(root: Path) -> None:
    run = pipeline.load(str(_runs(root)[2]))
    assert run.n_steps == 300 and run.has("lr")
    assert any("files/output.log" in n for n in run.meta.notes)


def test_the_wandb_file_itself_and_json_facts(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (log,) = _runs(root)[0].glob("*.wandb")
    assert pipeline.load(str(log)).n_steps == run_table().height
    main(["analyze", str(_runs(root)[0]), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert {"name": "epochs", "value": 8, "source": "wandb config num_train_epochs"} in doc["source"]["config_facts"]


def test_damaged_log_is_one_line_exit_2(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "offline-run-x"
    bad.mkdir()
    (bad / "run-x.wandb").write_bytes(b":W&B\xe1\xbe\x00" + b"\x01" * 500)
    assert main(["analyze", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "offline-run-x" in err and "checksum" in err
