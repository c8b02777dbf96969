"""Nothing seen must not mean nothing said: special files, unreadable and compressed logs, a W&B
run folder that appears later, a tracking server that fails for a while."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from logdoctor.cli import main
from logdoctor.errors import InputError
from logdoctor.ingest import mlflow_server
from logdoctor.ingest.mlflow_server import RunRef, TransientServerError
from logdoctor.tail import follower as follower_module
from logdoctor.tail import runsources
from logdoctor.tail.follower import FileFollower
from logdoctor.tail.runsources import MlflowPoller
from tests.conftest import FIXTURES


def _tail(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["tail", str(path), "--format", "plain", "--idle-timeout", "1", "--max-seconds", "5"])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_exit_2(code: int, err: str, *words: str) -> None:
    assert code == 2 and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("logdoctor: error: "), err
    assert all(w in lines[0] for w in words), lines[0]


def test_a_symlink_loop_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.log").symlink_to(tmp_path / "b.log")
    (tmp_path / "b.log").symlink_to(tmp_path / "a.log")
    code, _, err = _tail(tmp_path / "a.log", capsys)
    _one_line_exit_2(code, err, "a.log", "cannot follow it")


def test_a_fifo_is_refused_at_once_not_hung_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "train.log"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    code, _, err = _tail(fifo, capsys)
    _one_line_exit_2(code, err, "FIFO")
    assert time.monotonic() - t0 < 3


def test_a_file_it_may_not_read_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "train.log"
    shutil.copy(FIXTURES / "example.log", log)

    def denied(*args: object, **kw: object) -> object:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(follower_module, "open", denied, raising=False)  # root reads anything
    code, _, err = _tail(log, capsys)
    _one_line_exit_2(code, err, "train.log", "Permission denied")


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_a_compressed_log_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str) -> None:
    src = FIXTURES / "formats" / f"struct_compressed.jsonl{suffix}"
    log = tmp_path / f"train.jsonl{suffix}"
    shutil.copy(src, log)
    code, _, err = _tail(log, capsys)
    _one_line_exit_2(code, err, "compressed", "analyze")


def test_a_follower_read_of_a_special_file_raises_input_error(tmp_path: Path) -> None:
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    with pytest.raises(InputError):
        FileFollower(str(fifo)).read()
    assert FileFollower(str(tmp_path / "absent.log")).read().data == b""  # waited for


@pytest.mark.slow
def test_a_wandb_run_folder_that_appears_later_is_followed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("wandb")
    from fixtures.trackers import run_table, write_wandb

    run = write_wandb(run_table().head(120), tmp_path / "made")
    latest = tmp_path / "live" / "wandb" / "latest-run"

    def appear() -> None:
        time.sleep(0.8)
        shutil.copytree(run, latest)

    t = threading.Thread(target=appear)
    t.start()
    code = main(["tail", str(latest), "--format", "plain", "--idle-timeout", "3", "--max-seconds", "20"])
    t.join()
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err
    assert "W&B run" in out and " 120 rows" in out, out


def test_an_mlflow_server_that_fails_for_a_while_is_retried_with_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    answers: list[object] = [TransientServerError("srv: HTTP 503")] * 3 + [
        {"run": {"info": {"status": "FINISHED"}, "data": {"metrics": [{"key": "loss"}]}}}
    ]

    def get_json(ref: RunRef, endpoint: str, query: dict[str, str]) -> dict[str, object]:
        a = answers.pop(0) if answers else answers_final
        if isinstance(a, Exception):
            raise a
        return a  # type: ignore[return-value]

    answers_final = {"run": {"info": {"status": "FINISHED"}, "data": {"metrics": [{"key": "loss"}]}}}
    monkeypatch.setattr(runsources, "get_json", get_json)
    monkeypatch.setattr(runsources, "metric_history", lambda ref, key: [{"step": 1, "value": 2.0}])
    clock = [100.0]
    monkeypatch.setattr(runsources.time, "monotonic", lambda: clock[0])
    p = MlflowPoller(RunRef("http://srv", "r1"), interval=1.0)
    said = []
    waits = []
    for _ in range(4):
        chunk = p.read()
        said.append(chunk.notice)
        waits.append(p._next - clock[0])
        clock[0] = p._next
    assert said[0] is not None and "HTTP 503" in said[0] and "retrying" in said[0]
    assert said[1:3] == [None, None]  # said once
    assert waits[:3] == [1.0, 2.0, 4.0]  # backoff doubles
    assert said[3] == "the MLflow server answers again"


def test_transient_http_statuses_become_transient_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    def urlopen(*args: object, **kw: object) -> object:
        raise urllib.error.HTTPError("http://srv", 503, "Service Unavailable", None, None)  # type: ignore[arg-type]

    import urllib.request

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    with pytest.raises(TransientServerError, match="HTTP 503"):
        mlflow_server.get_json(RunRef("http://srv", "r1"), "runs/get", {})

    def reset(*args: object, **kw: object) -> object:
        raise ConnectionResetError(104, "Connection reset by peer")

    monkeypatch.setattr(urllib.request, "urlopen", reset)
    with pytest.raises(TransientServerError):
        mlflow_server.get_json(RunRef("http://srv", "r1"), "runs/get", {})
    assert issubclass(TransientServerError, InputError)  # analyze still reports it as one line
