"""A tracking server that goes away while tail follows it (a restart): retried, said once, never a silent exit."""

from __future__ import annotations

import http.client
import http.server
import json
import threading
import time
import urllib.error
import urllib.parse
from typing import ClassVar

import pytest

from logdoctor.cli import main
from logdoctor.errors import InputError
from logdoctor.ingest.mlflow_server import RunRef, TransientServerError, get_json
from logdoctor.tail import runsources
from tests.mlflow_support import free_port


class _Run(http.server.BaseHTTPRequestHandler):
    """The two endpoints tail polls, answering a run with ``steps[0]`` loss values."""

    steps: ClassVar[list[int]] = [40]
    finished: ClassVar[list[bool]] = [False]

    def do_GET(self) -> None:
        path = urllib.parse.urlparse(self.path).path
        if path.endswith("runs/get"):
            status = "FINISHED" if self.finished[0] else "RUNNING"
            doc: dict[str, object] = {"run": {"info": {"status": status}, "data": {"metrics": [{"key": "loss"}]}}}
        else:
            doc = {"metrics": [{"step": i, "value": 2 + 1 / i} for i in range(1, self.steps[0] + 1)]}
        body = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _Server:
    """A server on one port that can be stopped (connections refused) and started again."""

    def __init__(self) -> None:
        self.port = free_port()
        self._srv: http.server.ThreadingHTTPServer | None = None

    def up(self) -> None:
        self._srv = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), _Run)
        threading.Thread(target=self._srv.serve_forever, daemon=True).start()

    def down(self) -> None:
        if self._srv is not None:
            self._srv.shutdown()
            self._srv.server_close()
            self._srv = None


@pytest.fixture
def server() -> object:
    _Run.steps[0], _Run.finished[0] = 40, False
    srv = _Server()
    srv.up()
    yield srv
    srv.down()


def _later(*actions: tuple[float, object]) -> threading.Thread:
    def run() -> None:
        t0 = time.monotonic()
        for at, act in actions:
            time.sleep(max(0.0, t0 + at - time.monotonic()))
            act()  # type: ignore[operator]

    t = threading.Thread(target=run)
    t.start()
    return t


def test_a_server_that_restarts_is_retried_and_read_to_the_end(
    server: _Server, capsys: pytest.CaptureFixture[str]
) -> None:
    def back() -> None:
        _Run.steps[0], _Run.finished[0] = 80, True
        server.up()

    t = _later((1.5, server.down), (4.0, back))
    code = main(
        [
            "tail",
            f"mlflow://127.0.0.1:{server.port}/run1",
            "-f",
            "plain",
            "--server-interval",
            "0.5",
            "--max-seconds",
            "9",
        ]
    )
    t.join()
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err
    said = [line for line in err.splitlines() if "retrying with backoff" in line]
    # refused while it is down (or reset, when it went down mid-answer): said once
    assert len(said) == 1 and said[0].startswith("logdoctor: warning: ") and "for up to 900 s" in said[0], err
    assert "the MLflow server answers again" in out
    assert " 80 rows, last step 80" in out, out


def test_a_server_that_stays_away_ends_tail_with_one_line_after_the_stated_time(
    server: _Server, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(runsources, "GIVE_UP_AFTER", 2.0)
    t = _later((1.0, server.down))
    start = time.monotonic()
    code = main(
        [
            "tail",
            f"mlflow://127.0.0.1:{server.port}/run1",
            "-f",
            "plain",
            "--server-interval",
            "0.5",
            "--max-seconds",
            "30",
        ]
    )
    t.join()
    out, err = capsys.readouterr()
    assert code == 2 and time.monotonic() - start < 15 and "Traceback" not in err
    assert err.count("retrying with backoff") == 1
    assert err.splitlines()[-1].startswith("logdoctor: error: ") and "gave up after retrying for 2 s" in err
    assert "stopped (error), exit code 2" in out


@pytest.mark.parametrize(
    "failure",
    [
        urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")),
        ConnectionRefusedError(111, "Connection refused"),
        http.client.IncompleteRead(b'{"run"'),
        http.client.RemoteDisconnected("Remote end closed connection without response"),
    ],
    ids=["refused-in-urlerror", "refused", "cut-short", "disconnected"],
)
def test_failures_a_restart_gives_are_transient(failure: Exception, monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.request

    def urlopen(*args: object, **kw: object) -> object:
        raise failure

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    with pytest.raises(TransientServerError):
        get_json(RunRef("http://srv", "r1"), "runs/get", {})


def test_a_name_that_does_not_resolve_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import urllib.request

    def urlopen(*args: object, **kw: object) -> object:
        raise urllib.error.URLError(socket.gaierror(-2, "Name or service not known"))

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    with pytest.raises(InputError) as info:
        get_json(RunRef("http://srv", "r1"), "runs/get", {})
    assert not isinstance(info.value, TransientServerError)
