"""MLflow tracking server: a real ``mlflow server`` (sqlite, 127.0.0.1) serving runs of the real client."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from logdoctor import pipeline
from logdoctor.cli import main
from logdoctor.ingest.mlflow_server import RunRef, run_ref
from tests.mlflow_support import free_port


@pytest.fixture(scope="module")
def served(mlflow_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    """The session's server (conftest) with the static run logged over HTTP, and its CSV export."""
    from fixtures.trackers import run_table, write_csv, write_mlflow

    csv = write_csv(run_table(), tmp_path_factory.mktemp("mlflow_csv") / "static.csv")
    return mlflow_url, write_mlflow(run_table(), mlflow_url), csv


def test_addresses_name_a_run() -> None:
    ui = "http://host:5000/#/experiments/3/runs/0123abcd"
    assert run_ref(ui) == RunRef("http://host:5000", "0123abcd")
    assert run_ref("https://ml.example.org/mlflow/#/experiments/1/runs/ab12") == RunRef(
        "https://ml.example.org/mlflow", "ab12"
    )
    assert run_ref("mlflow://host:5000/0123abcd") == RunRef("http://host:5000", "0123abcd")
    assert run_ref("train.log") is None and run_ref("http://host/train.log") is None


def test_static_run_matches_its_csv_export(served: tuple[str, str, Path]) -> None:
    url, run_id, csv = served
    want = pipeline.analyze(pipeline.load(str(csv)))
    for name in (f"{url}/#/experiments/0/runs/{run_id}", f"mlflow://{url.removeprefix('http://')}/{run_id}"):
        got = pipeline.analyze(pipeline.load(name))
        assert got.series.steps == want.series.steps
        assert got.series.columns == want.series.columns
        assert got.series.epochs == want.series.epochs == 8
        assert got.verdict.batching == want.verdict.batching == "static"
    assert got.run.evals["eval_loss"].len() == got.run.n_steps // 100
    facts = {f.name: f for f in got.run.meta.config_facts}
    assert facts["grad_accum"].value == 4 and facts["grad_accum"].source == "mlflow params gradient_accumulation_steps"


def test_unknown_run_and_server_down_are_one_line_exit_2(
    served: tuple[str, str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, _, _ = served
    for name in (f"mlflow://{url.removeprefix('http://')}/0000deadbeef", f"mlflow://127.0.0.1:{free_port()}/abc"):
        assert main(["analyze", name]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and ("no such run" in err or "cannot reach" in err), err


class _Guarded(http.server.BaseHTTPRequestHandler):
    """A server that wants a bearer token: 401 without it (the headers it saw are kept)."""

    seen: ClassVar[list[str | None]] = []

    def do_GET(self) -> None:
        self.seen.append(self.headers.get("Authorization"))
        ok = self.headers.get("Authorization") == "Bearer s3cret"
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"run": {"data": {"metrics": []}}}' if ok else b'{"error_code": "UNAUTHENTICATED"}')

    def log_message(self, *args: object) -> None:
        pass


def test_401_is_one_line_and_the_token_is_sent(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Guarded)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        name = f"mlflow://127.0.0.1:{server.server_address[1]}/abc"
        monkeypatch.delenv("MLFLOW_TRACKING_TOKEN", raising=False)
        assert main(["analyze", name]) == 2
        assert "MLFLOW_TRACKING_TOKEN" in capsys.readouterr().err
        monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "s3cret")
        assert main(["analyze", name]) == 2  # let in: the run has no metrics
        assert "has no metrics" in capsys.readouterr().err
        assert _Guarded.seen == [None, "Bearer s3cret"]
    finally:
        server.shutdown()
        server.server_close()


def test_polling_a_live_run_hands_each_step_over_once(served: tuple[str, str, Path]) -> None:
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    from logdoctor.tail.runsources import MlflowPoller

    url, _, _ = served
    client = MlflowClient(tracking_uri=url)
    run_id = client.create_run(experiment_id="0").info.run_id
    poller = MlflowPoller(RunRef(url, run_id), interval=0.0)
    seen: list[int] = []

    def log(steps: range) -> None:
        metrics = [Metric("train/loss", 2.0 - s / 1000, 1_700_000_000_000 + s, s) for s in steps]
        client.log_batch(run_id, metrics=metrics)

    def poll() -> None:
        seen.extend(json.loads(line)["step"] for line in poller.read().data.splitlines())

    log(range(1, 31))
    poll()
    assert seen == list(range(1, 30))  # step 30 may still get more metrics: held back
    log(range(31, 61))
    poll()
    poll()
    assert seen == list(range(1, 60))
    client.set_terminated(run_id)
    poll()
    assert seen == list(range(1, 61))


def test_tail_of_a_server_run_raises_what_its_csv_raises(
    served: tuple[str, str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, run_id, csv = served

    def events(target: str) -> tuple[set[str], str | None, int]:
        capsys.readouterr()
        main(["tail", target, "--format", "jsonl", "--idle-timeout", "3", "--poll", "--server-interval", "1"])
        evs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
        verdicts = [e["verdict"]["batching"] for e in evs if e["event"] == "verdict"]
        (stop,) = [e for e in evs if e["event"] == "stop"]
        found = {e["finding"]["code"] for e in evs if e["event"] == "finding"}
        return found, (verdicts[-1] if verdicts else None), stop["sources"][0]["rows"]

    want = events(str(csv))
    assert events(f"{url}/#/experiments/0/runs/{run_id}") == want
    assert want[1] == "static"
