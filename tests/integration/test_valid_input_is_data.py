"""Any valid input is data: lone surrogates, deep nesting, non-UTF-8 metric names and huge numbers end
in a report or one error line (exit 2), never a traceback, in every command that reads them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from logdoctor.cli import main
from logdoctor.ingest import limits

DEEP = 5000  # past CPython's recursion limit (1,000): the stdlib parsers raise RecursionError


def _jsonl(path: Path, extra: str = "") -> Path:
    path.write_text("".join(f'{{"step": {i}, "loss": {2 - i / 100}{extra}}}\n' for i in range(60)))
    return path


def _no_crash(rc: int, out: str, err: str, allowed: tuple[int, ...] = (0, 1)) -> None:
    assert "Traceback" not in out + err, err
    assert rc in allowed, err


@pytest.mark.parametrize("command", ["analyze", "check", "parse"])
def test_lone_surrogates_in_jsonl_keys_and_values_are_data(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _jsonl(tmp_path / "s.jsonl", ', "\\udcff": "\\udcff", "k\\ud800": 1')
    args = [command, str(log)] + (["-o", str(tmp_path / "t.csv")] if command == "parse" else ["-f", "json"])
    rc = main(args)
    out, err = capsys.readouterr()
    _no_crash(rc, out, err)
    if command != "parse":
        doc = json.loads(out)
        assert doc["structure"]["rows"] == 60


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "html", "junit", "github"])
def test_a_non_utf8_mlflow_metric_name_is_data(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    metrics = tmp_path / "run" / "metrics"
    metrics.mkdir(parents=True)
    for name in (b"loss", b"acc\xff", b"lr"):
        with open(os.path.join(os.fsencode(metrics), name), "w") as fh:
            fh.writelines(f"{1700000000000 + i} {2 - i / 100} {i}\n" for i in range(50))
    rc = main(["analyze", str(tmp_path / "run"), "-f", fmt, "-o", str(tmp_path / f"r.{fmt}")])
    _no_crash(rc, *capsys.readouterr())
    assert (tmp_path / f"r.{fmt}").read_bytes().decode("utf-8")


def test_a_deeply_nested_trainer_state_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = {"log_history": [{"step": i, "loss": 1 - i / 100} for i in range(1, 40)], "global_step": 39}
    text = json.dumps(state)[:-1] + ', "deep": ' + "[" * DEEP + "]" * DEEP + "}"
    (tmp_path / "trainer_state.json").write_text(text)
    rc = main(["analyze", str(tmp_path / "trainer_state.json")])
    out, err = capsys.readouterr()
    _no_crash(rc, out, err, allowed=(2,))
    assert len(err.strip().splitlines()) == 1 and "nested too deeply" in err


@pytest.mark.parametrize("section", ["tool.other", "project"])
def test_deep_toml_in_another_tools_section_breaks_no_command(
    section: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[{section}]\nx = " + "[" * DEEP + "]" * DEEP + "\n")
    log = _jsonl(tmp_path / "a.jsonl")
    monkeypatch.chdir(tmp_path)
    rc = main(["check", str(log)])
    _no_crash(rc, *capsys.readouterr())


def test_deep_toml_in_our_own_section_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.logdoctor]\nx = " + "[" * DEEP + "]" * DEEP + "\n")
    log = _jsonl(tmp_path / "a.jsonl")
    monkeypatch.chdir(tmp_path)
    rc = main(["check", str(log)])
    out, err = capsys.readouterr()
    _no_crash(rc, out, err, allowed=(2,))
    assert len(err.strip().splitlines()) == 1


def test_huge_numbers_in_jsonl_are_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _jsonl(tmp_path / "h.jsonl", ', "big": 1' + "0" * 400 + ', "tiny": 1e-400, "huge": 1e400')
    rc = main(["analyze", str(log), "-f", "json"])
    out, err = capsys.readouterr()
    _no_crash(rc, out, err)
    json.loads(out)


def test_clean_value_walks_any_depth_and_fixes_keys() -> None:
    value: object = "\udcff"
    for _ in range(DEEP):
        value = [value]
    fixed = limits.clean_value({"k\udcff": value})
    key = next(iter(fixed))
    assert key == "k\ufffd"
    inner = fixed[key]
    for _ in range(DEEP):
        inner = inner[0]
    assert inner == "\ufffd"


def test_loads_refuses_past_the_stack_as_a_value_error() -> None:
    with pytest.raises(ValueError, match="nested too deeply"):
        limits.loads("[" * DEEP + "]" * DEEP)
    assert limits.loads('{"a\\udcff": ["\\ud800x"]}') == {"a\ufffd": ["\ufffdx"]}


class _Server:
    """A fake MLflow tracking server whose answers hold what a real one may: lone surrogates in
    metric keys, a param nested past the stack, and more metrics than the key budget."""

    def __init__(self, metrics: list[str], param: str) -> None:
        import http.server
        import threading
        import urllib.parse

        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                url = urllib.parse.urlparse(self.path)
                if url.path.endswith("runs/get"):
                    data = json.dumps({"metrics": [{"key": k} for k in metrics], "params": []})
                    body = '{"run": {"info": {"status": "FINISHED"}, "data": ' + data[:-1] + ", " + param + "}}}"
                else:
                    key = urllib.parse.parse_qs(url.query)["metric_key"][0]
                    outer.fetched += 1
                    hist = [
                        {"step": i, "value": 2 - i / 100 if key == "loss" else 0.5, "timestamp": i} for i in range(60)
                    ]
                    body = json.dumps({"metrics": hist})
                out = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.fetched = 0
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"mlflow://127.0.0.1:{self.httpd.server_address[1]}/abc123"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("case", ["surrogate", "deep", "many"])
def test_any_server_answer_is_data(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    metrics = ["loss", "acc\udcff"] + ([f"m{i}" for i in range(limits.MAX_KEYS + 44)] if case == "many" else [])
    param = '"x": ' + ("[" * DEEP + "]" * DEEP if case == "deep" else "1")
    server = _Server(metrics, param)
    try:
        rc = main(["analyze", server.url, "-f", "json"])
    finally:
        server.close()
    out, err = capsys.readouterr()
    if case == "deep":
        _no_crash(rc, out, err, allowed=(2,))
        assert len(err.strip().splitlines()) == 1
        return
    _no_crash(rc, out, err)
    doc = json.loads(out)
    assert doc["structure"]["rows"] == 60
    if case == "many":
        assert server.fetched == limits.MAX_KEYS
        assert any("most frequent of 302 metric names" in n for n in doc["source"]["notes"])
