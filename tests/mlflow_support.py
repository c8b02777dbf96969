"""A real ``mlflow server`` (sqlite store) on 127.0.0.1 for the tests: started, waited for, killed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

START_TIMEOUT_S = 120.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


@contextmanager
def mlflow_server(root: Path) -> Iterator[str]:
    """The base URL of a fresh server; its whole process group is killed on exit."""
    # the interpreter running the tests, not whatever `mlflow` is first on PATH (none where the virtual
    # environment is not activated, another installation's elsewhere)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable,
        "-m",
        "mlflow",
        "server",
        "--backend-store-uri",
        f"sqlite:///{root / 'mlflow.db'}",
        "--default-artifact-root",
        str(root / "artifacts"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
    ]
    log = (root / "server.log").open("wb")
    # no job runner: MLflow 3 starts seven huey consumer processes for server-side jobs, which the
    # tests never use and which cost more CPU at start-up than the server itself
    env = {
        **os.environ,
        "MLFLOW_HOME": str(root),
        "NO_PROXY": "127.0.0.1",
        "no_proxy": "127.0.0.1",
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
    }
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env, cwd=root)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _up(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mlflow server did not start: {(root / 'server.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        # a client's keep-alive connection makes a graceful stop wait ~10 s: a test server is killed sooner
        for sig, wait in ((signal.SIGTERM, 2), (signal.SIGKILL, 10)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        log.close()
