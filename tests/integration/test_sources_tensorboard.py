"""TensorBoard log dirs written by torch's SummaryWriter: several runs, HF's namespaced tags."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tensorboard", reason="the [tensorboard] extra is not installed")
pytest.importorskip("torch.utils.tensorboard", reason="torch is not installed")

from fixtures.trackers import BUCKETED, run_table, write_csv, write_tensorboard
from logdoctor import pipeline
from logdoctor.errors import InputError
from logdoctor.ingest.runfolders import tensorboard_runs

# one worker holds this module's expensive fixture (--dist loadgroup), not each worker its own
pytestmark = pytest.mark.xdist_group("tensorboard-run")


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tb")
    table = run_table()
    write_csv(table, root / "static.csv")
    write_tensorboard(table, root / "runs" / "static")
    write_tensorboard(run_table(BUCKETED), root / "runs" / "bucketed")
    return root


def test_each_run_in_a_log_dir_is_analysed_alone(logdir: Path) -> None:
    outcomes = pipeline.analyze_paths([str(logdir / "runs")], jobs=1)
    assert [Path(o.path).name for o in outcomes] == ["bucketed", "static"]
    verdicts = {Path(o.path).name: o.report.verdict.batching for o in outcomes if o.report}
    assert verdicts == {"bucketed": "healthy", "static": "static"}


def test_static_run_matches_its_csv_export(logdir: Path) -> None:
    csv = pipeline.analyze(pipeline.load(str(logdir / "static.csv")))
    tb = pipeline.analyze(pipeline.load(str(logdir / "runs" / "static")))
    assert tb.series.steps == csv.series.steps == run_table().height
    assert tb.series.columns == csv.series.columns
    assert tb.series.epochs == csv.series.epochs == 8
    assert tb.verdict.batching == csv.verdict.batching == "static"


def test_hf_namespaced_tags_map_to_columns_and_evals(logdir: Path) -> None:
    run = pipeline.load(str(logdir / "runs" / "static"))
    for col in ("loss", "lr", "grad_norm", "epoch"):
        assert run.has(col), col
    assert run.table["epoch"].max() == 7
    assert "eval_loss" in run.evals.columns and run.evals.height == run.n_steps // 100
    assert "train_epoch" not in run.evals.columns


def test_one_run_and_keras_split_folders_are_not_expanded(logdir: Path, tmp_path: Path) -> None:
    assert tensorboard_runs(logdir / "runs" / "static") == []
    for split in ("train", "validation"):
        (tmp_path / "keras" / split).mkdir(parents=True)
        (tmp_path / "keras" / split / "events.out.tfevents.1.h").write_bytes(b"")
    assert tensorboard_runs(tmp_path / "keras") == []
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "events.out.tfevents.2.h").write_bytes(b"")
    assert tensorboard_runs(tmp_path) == [tmp_path / "keras", tmp_path / "other"]


def test_loading_a_log_dir_of_several_runs_never_merges_them(logdir: Path) -> None:
    with pytest.raises(InputError, match=r"a log dir of 2 runs \(bucketed, static"):
        pipeline.load(str(logdir / "runs"))
