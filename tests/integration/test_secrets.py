"""Secrets are never printed: a credential in any input address reaches no output of any sink.

Each input kind carries its own secrets: the log path argument (a presigned-style query and a
token shape in a local file's name), a remote URL (userinfo and ``X-Amz-*`` parameters), a
tracking-server address (userinfo), and a missing file whose name (quoted in an error) holds a
password. Every sink is run over all of them and searched for every secret.
"""

from __future__ import annotations

import base64
import http.server
import json
import subprocess
import sys
import threading
import types
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from logdoctor import sanitize
from logdoctor.cli import main
from logdoctor.renderers import RENDERERS

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "fixtures" / "example.log"

SECRETS = {
    "query_token": "tok9Q2mZx7",
    "amz_signature": "5f3c9a0b7e1d2c4f",
    "amz_credential": "AKIAIOSFODNN7EXAMPLE",
    "hf_token": "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3f",
    "userinfo_password": "Pw0rd-remote-77",
    "tracker_password": "Pw0rd-tracker-88",
    "error_password": "Pw0rd-missing-99",
    "ghp_token": "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345",
    "wandb_key": "0123456789abcdef0123456789abcdef01234567",
}


class _Tracker(http.server.BaseHTTPRequestHandler):
    """An MLflow server that wants the address's user and password (basic authentication)."""

    def do_GET(self) -> None:
        want = "Basic " + base64.b64encode(f"bob:{SECRETS['tracker_password']}".encode()).decode()
        if self.headers.get("Authorization") != want:
            self.send_response(401)
            self.end_headers()
            return
        if urllib.parse.urlparse(self.path).path.endswith("runs/get"):
            doc: dict[str, object] = {"run": {"info": {"status": "FINISHED"}, "data": {"metrics": [{"key": "loss"}]}}}
        else:
            doc = {"metrics": [{"step": i, "value": 9.0 if i == 70 else 2 + 1 / i} for i in range(1, 121)]}
        body = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def tracker() -> Iterator[int]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Tracker)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield int(srv.server_address[1])
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def inputs(tmp_path: Path, tracker: int) -> list[str]:
    return _inputs(tmp_path, tracker)


def _inputs(tmp_path: Path, port: int) -> list[str]:
    s = SECRETS
    local = tmp_path / (
        f"train?token={s['query_token']}&X-Amz-Signature={s['amz_signature']}"
        f"&X-Amz-Credential={s['amz_credential']}&x={s['hf_token']}.log"
    )
    local.write_bytes(EXAMPLE.read_bytes())
    return [
        str(local),
        f"https://alice:{s['userinfo_password']}@h.invalid/run.log?X-Amz-Security-Token={s['ghp_token']}",
        f"http://bob:{s['tracker_password']}@127.0.0.1:{port}/#/experiments/0/runs/abc123",
        str(tmp_path / f"missing?password={s['error_password']}&api_key={s['wandb_key']}.log"),
    ]


def _leaks(data: bytes | str) -> list[str]:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return [name for name, secret in SECRETS.items() if secret in text]


@pytest.mark.parametrize("fmt", list(RENDERERS))
def test_no_report_format_prints_a_secret(
    fmt: str, inputs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each input alone (a figure shows one run), then all together (a summary) where the format has one."""
    runs = [[name] for name in inputs] + ([] if RENDERERS[fmt].is_binary else [inputs])
    written = []
    for i, names in enumerate(runs):
        out = tmp_path / f"out{i}.{fmt}"
        code = main(["analyze", *names, "-f", fmt, "-o", str(out), "--reports", "-j", "1"])
        assert code == (0 if i in (0, 2) else 2)  # the local log and the tracker's run are read
        written += [out.read_bytes()] if out.exists() else []
    err = capsys.readouterr().err
    assert len(written) >= 2 and all(written)
    assert _leaks(err) == [] and [_leaks(data) for data in written] == [[]] * len(written)
    assert "***" in err  # the errors still name their input, redacted


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "github", "junit"])
def test_no_report_on_stdout_prints_a_secret(fmt: str, inputs: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    main(["analyze", *inputs, "-f", fmt, "-v", "-j", "1"])
    out, err = capsys.readouterr()
    assert out and _leaks(out) == [] and _leaks(err) == []
    assert fmt != "json" or "http://***@127.0.0.1" in out  # the tracker's run was read and reported


@pytest.mark.parametrize("table", ["csv", "parquet", "jsonl"])
def test_parse_tables_and_their_errors_print_no_secret(
    table: str, inputs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local, remote, tracker, missing = inputs
    for i, name in enumerate((local, tracker)):
        assert main(["parse", name, "-o", str(tmp_path / f"t{i}.{table}")]) == 0
        assert _leaks((tmp_path / f"t{i}.{table}").read_bytes()) == []
    for name in (remote, missing):
        assert main(["parse", name, "--table-format", table, "-o", str(tmp_path / f"e.{table}")]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 2 and _leaks(err) == [] and _leaks(out) == []


def test_a_secret_key_quoted_by_a_library_error_is_redacted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """botocore quotes the bucket it could not parse, with the credentials the URL held: the URL's
    userinfo is redacted, and so is the same secret quoted elsewhere in the text."""
    key_id, secret_key = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzEXAMPLEKEY"

    class ParamValidationError(Exception):
        pass

    ParamValidationError.__module__ = "botocore.exceptions"

    def fs_open(name: str, mode: str) -> object:
        raise ParamValidationError(f'Invalid bucket name "{key_id}:{secret_key}@bucket": Bucket name must match')

    monkeypatch.setitem(sys.modules, "fsspec", types.SimpleNamespace(open=fs_open))
    assert main(["analyze", f"s3://{key_id}:{secret_key}@bucket/run.log", "-f", "json"]) == 2
    out, err = capsys.readouterr()
    assert "Invalid bucket name" in err and secret_key not in err + out and key_id not in err + out


def _hook(tmp_path: Path) -> tuple[str, Path]:
    dump = tmp_path / "hook.out"
    script = tmp_path / "hook.sh"
    script.write_text(f'#!/bin/sh\n{{ cat; echo; env | grep ^LOGDOCTOR_; echo "$@"; }} >> "{dump}"\n')
    script.chmod(0o755)
    return f"{script} {tmp_path.name}", dump


@pytest.mark.parametrize("fmt", ["plain", "jsonl"])
def test_tail_events_and_hook_arguments_print_no_secret(fmt: str, inputs: list[str], tmp_path: Path) -> None:
    local, _, tracker, _ = inputs
    hook, dump = _hook(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "logdoctor",
            "tail",
            local,
            tracker,
            "-f",
            fmt,
            "--on-finding",
            hook,
            "--max-seconds",
            "4",
            "--server-interval",
            "0.5",
        ],
        cwd=REPO,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert b"Traceback" not in proc.stderr
    assert proc.stdout.count(b"\n") > 2 and dump.exists() and b"LOGDOCTOR_SOURCE" in dump.read_bytes()
    assert _leaks(proc.stdout) == [] and _leaks(proc.stderr) == [] and _leaks(dump.read_bytes()) == []
    assert b"http://***@127.0.0.1" in proc.stdout  # the tracker's run was read
    assert b" 120 rows" in proc.stdout or b'"rows": 120' in proc.stdout
    if fmt == "jsonl":
        assert all(json.loads(line) for line in proc.stdout.splitlines())


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "https://b.s3.amazonaws.com/r.log?X-Amz-Algorithm=AWS4&X-Amz-Signature=ab12&X-Amz-Credential=AKIAX%2F1",
            "https://b.s3.amazonaws.com/r.log?X-Amz-Algorithm=***&X-Amz-Signature=***&X-Amz-Credential=***",
        ),
        (
            "https://acct.blob.core.windows.net/c/r.log?sv=2021&sig=Zm9v%3D&se=1",
            "https://acct.blob.core.windows.net/c/r.log?sv=2021&sig=***&se=1",
        ),
        (
            "run.log?token=t0k3n&metric_key=loss&access_token=a&api_key=b&secret=c&password=d&key=e",
            "run.log?token=***&metric_key=loss&access_token=***&api_key=***&secret=***&password=***&key=***",
        ),
        (
            "id AKIAIOSFODNN7EXAMPLE and hf_abcdefghijklmnopqrstuvwxyz01234567 and ghp_" + "a" * 36,
            "id *** and *** and ***",
        ),
        ("WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567", "WANDB_API_KEY=***"),
        ("Authorization: Bearer abc.def-ghi_123", "Authorization: ***"),
        ("s3://AKIAIOSFODNN7EXAMPLE:wJalr/K7MDENG@bucket/x", "s3://***@bucket/x"),
    ],
)
def test_redact_covers_every_kind_of_credential(text: str, want: str) -> None:
    assert sanitize.redact(text) == want


def test_redact_keeps_ordinary_text_and_hashes_when_asked() -> None:
    ordinary = "step 412 loss=4.9 (len_mean 1-5%), run 0123abcd, see https://host/users/@me and user@example.com"
    assert sanitize.redact(ordinary) == ordinary
    sha1 = "0123456789abcdef0123456789abcdef01234567"
    assert sanitize.redact(sha1, hashes=False) == sha1


def test_a_secret_met_in_a_url_is_redacted_where_quoted_alone() -> None:
    sanitize.redact("s3://someone:Quoted-Secret-42@bucket/run.log")
    assert sanitize.redact('error: "Quoted-Secret-42" rejected') == 'error: "***" rejected'
    assert sanitize.redact("http://u:ab@h/x") == "http://***@h/x"  # and a short one only inside its URL
    assert sanitize.redact("a lab report") == "a lab report"


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "html"])
def test_compare_prints_no_secret(
    fmt: str, inputs: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local, _, tracker, _ = inputs
    assert main(["compare", local, tracker, "--force", "-f", fmt, "-o", str(tmp_path / f"c.{fmt}")]) in (0, 1)
    out, err = capsys.readouterr()
    assert _leaks((tmp_path / f"c.{fmt}").read_bytes()) == [] and _leaks(out + err) == []


@pytest.mark.parametrize("args", [["parse", "x.log", "--{url}"], ["{url}"], ["analyze", "--map", "{url}", "x.log"]])
def test_usage_errors_print_no_secret(args: list[str], inputs: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    url = inputs[1]
    assert main([a.format(url=url) for a in args]) == 2
    out, err = capsys.readouterr()
    assert err and _leaks(out + err) == []
