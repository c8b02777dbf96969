"""Fleet inputs: an MLflow experiment on a real ``mlflow server`` and an S3 prefix on a real
S3-compatible server (moto's server mode), both on 127.0.0.1, listed once and analysed run by run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.fleet import DIVERGE_AT, diverges, fleet_text, write_fleet
from logdoctor import pipeline
from logdoctor.cli import main
from logdoctor.errors import InputError
from logdoctor.ingest.fleet import list_fleet, looks_like_log
from logdoctor.ingest.fleet.mlflow import ExperimentRef, experiment_ref
from logdoctor.ingest.mlflow_server import run_ref
from tests.conftest import MLFLOW_FLEET_RUNS

# tests sharing the session's mlflow server run on one xdist worker (one server start, not one per worker)
pytestmark = pytest.mark.xdist_group("mlflow-server")


def test_experiment_addresses_and_filters() -> None:
    assert experiment_ref("mlflow://h:5000/experiments/3") == ExperimentRef("http://h:5000", "3")
    ref = experiment_ref("http://h:5000/#/experiments/7?status=finished,failed&after=2026-11-01")
    assert ref is not None and ref.experiment == "7" and ref.status == ("FINISHED", "FAILED")
    assert ref.after == 1_793_491_200_000 and ref.search_filter() == "attributes.start_time >= 1793491200000"
    named = experiment_ref("mlflow://h:443/ml/experiments/my%20sweep/?status=KILLED&filter=params.lr%20%3D%20%270.1%27")
    assert named == ExperimentRef("https://h:443/ml", "my sweep", ("KILLED",), filter="(params.lr = '0.1')")
    assert named.search_filter() == "(params.lr = '0.1') AND attributes.status = 'KILLED'"
    # an experiment is not a run, and a run is not an experiment
    assert run_ref("mlflow://h:5000/experiments/3") is None
    assert experiment_ref("mlflow://h:5000/0123abcd") is None and experiment_ref("s3://b/runs/") is None
    for bad in (
        "mlflow://h/experiments/3?stat=FAILED",
        "mlflow://h/experiments/3?status=DONE",
        "mlflow://h/experiments/3?after=yesterday",
    ):
        with pytest.raises(InputError):
            experiment_ref(bad)


def test_log_names() -> None:
    assert looks_like_log("s3://b/runs/a/train.log") and looks_like_log("x/metrics.jsonl.gz")
    assert not looks_like_log("s3://b/runs/README.md") and not looks_like_log("b/runs/model.safetensors")
    assert not looks_like_log("runs/.hidden.log") and not looks_like_log("MANIFEST.tsv")


def _statuses(outcomes: list) -> list[str]:
    return [o.report.status if o.report else f"error: {o.error}" for o in outcomes]


def test_an_mlflow_experiment_is_every_run_of_it(mlflow_url: str, tmp_path: Path) -> None:
    host = mlflow_url.removeprefix("http://")
    runs = list_fleet(f"mlflow://{host}/experiments/fleet")  # by name
    assert runs is not None and len(runs) == MLFLOW_FLEET_RUNS
    assert all(run_ref(r) is not None for r in runs)
    exp = runs[0].split("/#/experiments/")[1].split("/")[0]
    failed = list_fleet(f"mlflow://{host}/experiments/{exp}?status=FAILED")
    assert failed == [r for i, r in enumerate(runs) if diverges(i)]
    both = list_fleet(f"{mlflow_url}/#/experiments/{exp}?status=FAILED,FINISHED")
    assert both == runs
    later = list_fleet(f"mlflow://{host}/experiments/{exp}?after=2023-11-14T22:13:30")  # runs start 1 s apart
    assert later == runs[10:]
    # analysed run by run: the same statuses as the same losses written as text logs
    write_fleet(tmp_path, MLFLOW_FLEET_RUNS)
    served = pipeline.analyze_paths([f"mlflow://{host}/experiments/fleet"], jobs=1)
    local = pipeline.analyze_paths([str(tmp_path)], jobs=1)
    assert _statuses(served) == _statuses(local)
    assert [s == "error" for s in _statuses(served)] == [diverges(i) for i in range(MLFLOW_FLEET_RUNS)]


def test_an_experiment_as_an_html_fleet_report(mlflow_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "fleet"
    assert (
        main(
            [
                "analyze",
                f"mlflow://{mlflow_url.removeprefix('http://')}/experiments/fleet",
                "-j",
                "1",
                "-f",
                "html",
                "-o",
                str(folder),
            ]
        )
        == 0
    )
    index = (folder / "index.html").read_text()
    assert index.count("<a href=") == MLFLOW_FLEET_RUNS == len(list(folder.glob("0*.html")))
    assert f"{MLFLOW_FLEET_RUNS} runs: {sum(map(diverges, range(MLFLOW_FLEET_RUNS)))} error" in index


def test_experiment_errors_are_one_line_exit_2(mlflow_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    host = mlflow_url.removeprefix("http://")
    for name, why in (
        (f"mlflow://{host}/experiments/no-such-sweep", "no experiment named"),
        (f"mlflow://{host}/experiments/fleet?after=2099-01-01", "no run that passes"),
        (f"mlflow://{host}/experiments/fleet?colour=red", "unknown filter"),
    ):
        assert main(["check", name]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and why in err, err


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A bucket on moto's S3 server (127.0.0.1, a free port) holding eight runs' logs, a README
    and a checkpoint; s3fs finds it through the standard AWS environment variables."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'logdoctor[remote]' s3fs)")
    pytest.importorskip("moto.server", reason="moto[server] is not installed")
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": str(tmp_path_factory.mktemp("aws") / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path_factory.mktemp("aws") / "none"),
    }
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"])
        client.create_bucket(Bucket="lab")
        for i in range(8):
            client.put_object(Bucket="lab", Key=f"runs/sweep/r{i}/train.log", Body=fleet_text(i).encode())
        client.put_object(Bucket="lab", Key="runs/README.md", Body=b"# the sweep\n")
        client.put_object(Bucket="lab", Key="runs/sweep/r0/model.bin", Body=b"\0" * 64)
        import fsspec

        fsspec.filesystem("s3").invalidate_cache()
        try:
            yield "s3://lab"
        finally:
            server.stop()


def test_an_s3_prefix_and_glob_list_the_logs_once(s3: str, tmp_path: Path) -> None:
    want = [f"{s3}/runs/sweep/r{i}/train.log" for i in range(8)]
    assert list_fleet(f"{s3}/runs/") == want
    assert list_fleet(f"{s3}/runs/**/train.log") == want
    assert list_fleet(f"{s3}/runs/sweep/r[0-3]/*.log") == want[:4]
    assert list_fleet(f"{s3}/runs/sweep/r0/train.log") is None  # one file: read as before
    outcomes = pipeline.analyze_paths([f"{s3}/runs/"], jobs=1)
    assert [o.path for o in outcomes] == want
    write_fleet(tmp_path, 8)  # the same logs, local: the same findings
    assert _statuses(outcomes) == _statuses(pipeline.analyze_paths([str(tmp_path)], jobs=1))
    assert [s == "error" for s in _statuses(outcomes)] == [diverges(i) for i in range(8)]
    bad = outcomes[4].report
    assert bad is not None and bad.problems[0].first_step == DIVERGE_AT + 1
    assert main(["check", f"{s3}/runs/", "-j", "1"]) == 1  # a prefix: the fleet report, exit by the worst run


def test_an_empty_s3_prefix_is_one_line_exit_2(s3: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", f"{s3}/nothing-here/"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no logs under this prefix" in err, err
