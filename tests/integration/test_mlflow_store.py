"""MLflow's local sqlite store (``mlflow.db``), written by the real mlflow client: every run in it
analysed as a fleet, experiments selected with the tracking server's filters, read-only (issue 42.2)."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from fixtures.fleet import diverges, write_fleet, write_mlflow_fleet
from logdoctor import pipeline
from logdoctor.cli import main
from logdoctor.ingest.fleet import is_fleet, list_fleet
from logdoctor.ingest.mlflow_store import is_mlflow_sqlite, store_address

pytest.importorskip("mlflow", reason="mlflow is not installed (pip install mlflow)")

RUNS = 5  # run 4 diverges (NaN from step 300 on) and ends FAILED


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("store")
    db = root / "mlflow.db"
    write_mlflow_fleet(f"sqlite:///{db}", RUNS, name="sweep")
    write_mlflow_fleet(f"sqlite:///{db}", 2, name="other", steps=120)
    return db


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_run_of_the_store_is_a_fleet_and_the_nan_run_is_found(store: Path, tmp_path: Path) -> None:
    before = _digest(store)
    runs = list_fleet(str(store))
    assert runs is not None and len(runs) == RUNS + 2 and is_fleet(str(store))
    assert list_fleet(f"sqlite:///{store}") == runs  # the URI names the same store
    sweep = pipeline.analyze_paths([f"{store}#/experiments/sweep"], jobs=1)
    write_fleet(tmp_path, RUNS)  # the same losses as text logs
    local = pipeline.analyze_paths([str(tmp_path)], jobs=1)
    statuses = [o.report.status if o.report else o.error for o in sweep]
    assert statuses == [o.report.status if o.report else o.error for o in local]
    assert [s == "error" for s in statuses] == [diverges(i) for i in range(RUNS)]
    nan_run = sweep[[diverges(i) for i in range(RUNS)].index(True)].report
    assert nan_run is not None and "LD001" in {f.code for f in nan_run.findings}
    assert nan_run.run.meta.format == "mlflow_sqlite"
    assert _digest(store) == before  # read, never written


def test_experiments_and_filters_select_runs(store: Path) -> None:
    runs = list_fleet(str(store)) or []
    sweep = list_fleet(f"{store}#/experiments/sweep") or []
    assert len(sweep) == RUNS and set(sweep) < set(runs)  # the store: oldest first, every experiment
    exp = sweep[0].split("#/experiments/")[1].split("/")[0]
    assert list_fleet(f"{store}#/experiments/{exp}") == sweep  # by id
    failed = list_fleet(f"sqlite:///{store}#/experiments/sweep?status=FAILED")
    assert failed == [r for i, r in enumerate(sweep) if diverges(i)]
    assert len(list_fleet(f"{store}#/experiments/other") or []) == 2
    one = store_address(sweep[0])
    assert one is not None and one.run_id and not is_fleet(sweep[0]) and list_fleet(sweep[0]) is None


def test_the_cli_reports_the_store_as_a_fleet(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(store), "-j", "1"]) == 0
    out = capsys.readouterr().out
    assert f"{RUNS + 2} runs: 1 error" in out and "binary file" not in out
    assert main(["check", f"{store}#/experiments/other", "-j", "1"]) == 0


def test_store_errors_are_one_line_exit_2(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain.db"
    with sqlite3.connect(plain) as db:
        db.execute("CREATE TABLE t (x INTEGER)")
    for name, why in (
        (f"{store}#/experiments/no-such", "no experiment named"),
        (f"{store}#/experiments/sweep?colour=red", "unknown filter"),
        (f"{store}#/experiments/sweep?after=2099-01-01", "no run that passes"),
        (f"{store}#/runs/x", "expected #/experiments/"),
        (f"sqlite:///{tmp_path / 'none.db'}", "no such sqlite file"),
        (f"sqlite:///{plain}", "not an MLflow store"),
        (str(plain), "binary file"),
    ):
        assert main(["analyze", name, "-j", "1"]) == 2, name
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and why in err, err


def test_only_a_sqlite_file_with_mlflows_tables_is_a_store(store: Path, tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("step 1 loss=2.0\n")
    assert is_mlflow_sqlite(store) and not is_mlflow_sqlite(log) and store_address(str(log)) is None
    assert not is_fleet(str(log)) and list_fleet(str(log)) is None
