"""Hostile names stay inert in every sink: file names, W&B config values and MLflow params carrying
ANSI/OSC escape sequences, raw HTML, Markdown links, line breaks, workflow commands and URL
credentials are shown (escaped) in every format, on stderr, with -q and in tail's view, never obeyed.
JSON keeps the raw strings (it is data), URL credentials excepted."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from fixtures.hostile import _curve, _log
from logdoctor import pipeline
from logdoctor.cli import main
from logdoctor.ingest.wandb_records import _CONFIG
from logdoctor.model import ConfigFact, Report
from logdoctor.renderers import RENDERERS
from tests.wandb_support import history, ld, write_log

# tests sharing the session's mlflow server run on one xdist worker (one server start, not one per worker)
pytestmark = pytest.mark.xdist_group("mlflow-server")

REPO = Path(__file__).resolve().parents[2]
#: a file name with an OSC 8 hyperlink, colours, a right-to-left override, raw HTML, a line break
#: forging a line, a Markdown link, table pipes, a workflow command and a percent-encoded newline
NAME = (
    "run\x1b]8;;https:evil\x07click\x1b]8;;\x07\x1b[31mRED\x1b[0m\u202e<img src=x onerror=alert(1)>"
    "\nFORGED `|*x*[a](javascript:alert(1))::warning::%0A.log"
)
#: a config value with the same, and a URL with credentials
VALUE = (
    "\x1b[2J\x1b[31mcos<img src=x onerror=alert(2)>\nFORGED [a](javascript:alert(2)) http://alice:s3cret@evil.example/x"
)
FORMATS = ("text", "json", "markdown", "github", "junit", "html")


def _inert_on_terminal(text: str) -> None:
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", text), repr(text)
    # a line break in a name is shown as \n: no line of the output starts with the forged text
    assert not any(line.lstrip(" │|-*>#").startswith("FORGED") for line in text.splitlines()), text
    assert "s3cret" not in text


def _inert_markdown(text: str) -> None:
    _inert_on_terminal(text)
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<img" not in html and "<a " not in html and "\x1b" not in html, html


def _inert_github(text: str) -> None:
    _inert_on_terminal(text)
    for line in text.splitlines():
        # each line one command; its properties hold no raw ':' or ',' so a name cannot end them
        assert re.match(r"::(notice|warning|error)( [^:]*)?::", line), line


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [k for k, _ in attrs]


def _inert_html(text: str) -> None:
    _inert_on_terminal(text.replace("\n", " "))
    tags = _Tags()
    tags.feed(text)
    assert "img" not in tags.tags and "onerror" not in tags.attrs


def _inert_junit(text: str) -> None:
    _inert_on_terminal(text)
    ET.fromstring(text.encode())  # well-formed XML 1.0 (a raw ESC is not)


INERT = {
    "text": _inert_on_terminal,
    "markdown": _inert_markdown,
    "github": _inert_github,
    "junit": _inert_junit,
    "html": _inert_html,
}


def _config_record(config: dict[str, object]) -> bytes:
    def value(data: bytes) -> bytes:  # field 16, length-delimited (value_json)
        n = len(data)
        return b"\x82\x01" + (bytes([n]) if n < 128 else bytes([(n & 0x7F) | 0x80, n >> 7])) + data

    items = b"".join(ld(1, ld(1, k.encode()) + value(json.dumps(v).encode())) for k, v in config.items())
    return ld(_CONFIG, items)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hostile_names")
    text = root / NAME
    text.write_text(_log(range(1, 301), _curve(300)))
    dollar = root / "b$\\frac{a}{$x_^.log"  # matplotlib parses $...$ as mathtext (this one raised)
    dollar.write_text(text.read_text())
    empty = root / ("empty" + NAME)
    empty.write_bytes(b"")
    config = {"lr_scheduler_type": VALUE, "num_train_epochs": 3, "\x1b[2J<b>x": {"per_device_train_batch_size": 8}}
    records = [_config_record(config)] + [history(i, loss=3.0 - i / 100) for i in range(1, 120)]
    wandb = root / "run-hostile.wandb"
    wandb.write_bytes(write_log(records))
    return {"text": text, "empty": empty, "wandb": wandb, "dollar": dollar}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("source", ["text", "wandb"])
def test_every_format_shows_hostile_names_and_config_values_inert(
    fmt: str, source: str, logs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["analyze", str(logs[source]), "--format", fmt])
    out, err = capsys.readouterr()
    assert rc in (0, 1), err
    _inert_on_terminal(err)
    if fmt == "json":
        doc = json.loads(out)
        assert doc["source"]["path"] == str(logs[source])  # data: the raw name, JSON-escaped
        if source == "wandb":
            facts = {f["name"]: f for f in doc["source"]["config_facts"]}
            assert facts["lr_schedule"]["value"] == VALUE.replace("alice:s3cret@", "***@")
            assert facts["batch_size"]["source"] == "wandb config \x1b[2J<b>x.per_device_train_batch_size"
        return
    INERT[fmt](out)
    if source == "wandb" and fmt in ("text", "markdown", "html"):  # the config row: shown, escaped, redacted
        assert "***@evil.example" in out.replace("\\", "")


@pytest.mark.parametrize("verbosity", ["-q", "-v"])
def test_quiet_and_verbose_lines_are_inert(
    verbosity: str, logs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    for fmt in ("text", "markdown"):
        rc = main(["analyze", str(logs["wandb"]), str(logs["text"]), verbosity, "--format", fmt])
        out, err = capsys.readouterr()
        assert rc in (0, 1), err
        INERT[fmt](out)


def test_errors_on_stderr_are_one_inert_line(logs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    for fmt in FORMATS:
        rc = main(["analyze", str(logs["empty"]), "--format", fmt])
        out, err = capsys.readouterr()
        assert rc == 2
        assert len(err.strip().splitlines()) == 1 and err.startswith("logdoctor: error: "), err
        _inert_on_terminal(err)
        if fmt in INERT and out:
            INERT[fmt](out)


def test_credentials_in_an_mlflow_url_are_redacted_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    url = "http://alice:s3cret@127.0.0.1:1/#/experiments/0/runs/0123abc"
    for fmt in FORMATS:
        rc = main(["analyze", url, "--format", fmt])
        out, err = capsys.readouterr()
        assert rc == 2
        assert "s3cret" not in out + err and "http://***@127.0.0.1:1" in err, err


def test_mlflow_params_are_inert_in_every_renderer(logs: dict[str, Path]) -> None:
    report = pipeline.analyze(pipeline.load(str(logs["text"])))
    fact = ConfigFact(name="lr_schedule", value=VALUE, source="mlflow params \x1b]8;;x\x07<i>lr_scheduler_type")
    run = dataclasses.replace(report.run, meta=dataclasses.replace(report.meta, config_facts=(fact,)))
    hostile = dataclasses.replace(report, run=run)
    assert isinstance(hostile, Report)
    for fmt in ("text", "markdown", "github", "junit", "html"):
        for verbosity in (-1, 0, 1):
            out = str(RENDERERS[fmt](verbosity=verbosity, color=True).render(hostile))
            INERT[fmt](re.sub(r"\x1b\[[0-9;]*m", "", out) if fmt == "text" else out)  # rich's own colours
    doc = json.loads(str(RENDERERS["json"]().render(hostile)))
    assert doc["source"]["config_facts"][0]["source"] == fact.source


def test_console_in_colour_keeps_its_own_styles_only(logs: dict[str, Path]) -> None:
    report = pipeline.analyze(pipeline.load(str(logs["text"])))
    out = str(RENDERERS["text"](color=True, width=400).render(report))
    assert "\x1b[" in out  # rich's own colours
    assert "\x1b]" not in out and "\x07" not in out and "\x1b[31mRED" not in out  # none of the name's
    assert "\\x1b[31mRED" in out and "::warning::" in out  # shown, as written (no emoji, no markup)


def test_tail_plain_lines_are_inert(logs: dict[str, Path]) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "logdoctor",
            "tail",
            str(logs["text"]),
            "-f",
            "plain",
            "--idle-timeout",
            "1",
            "--max-seconds",
            "20",
            "--poll-interval",
            "0.1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "following" in proc.stdout and "\\x1b]8" in proc.stdout
    _inert_on_terminal(proc.stdout)
    _inert_on_terminal(proc.stderr)


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "html"])
def test_compare_views_are_inert(fmt: str, logs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["compare", str(logs["text"]), str(logs["dollar"]), "--format", fmt])
    out, err = capsys.readouterr()
    assert rc in (0, 1), err
    _inert_on_terminal(err)
    if fmt == "json":
        assert json.loads(out)["baseline"]["source"]["path"] == str(logs["text"])  # data: the raw name
    else:
        {"markdown": _inert_markdown, "html": _inert_html}.get(fmt, _inert_on_terminal)(out)


def test_figures_draw_names_with_dollars_and_controls(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("dollar", "text"):
        assert main(["plot", str(logs[name]), "-o", str(tmp_path / f"{name}.png")]) == 0
        _inert_on_terminal(capsys.readouterr().err)  # no matplotlib warning about glyph 27 either
    rc = main(["compare", str(logs["text"]), str(logs["dollar"]), "--plot", str(tmp_path / "c.png")])
    assert rc in (0, 1) and (tmp_path / "c.png").stat().st_size > 0
    _inert_on_terminal(capsys.readouterr().err)


def test_tail_live_view_is_inert() -> None:
    import io

    from logdoctor import codes
    from logdoctor.tail.events import FindingRaised, Notice, Started, Stopped
    from logdoctor.tail.live import LiveStream

    out = io.StringIO()
    view = LiveStream(out, width=400)
    view.console.force_terminal = True  # draw as on a terminal, rich's colours included
    view.start(Started(sources=(NAME, "[bold]x[/bold]:warning:"), time=0.0))
    finding = codes.finding("LD002", f"The loss diverged in {NAME}", first_step=7, last_step=9)
    view.handle(FindingRaised(NAME, finding, 9, 1.0))
    view.handle(Notice(NAME, f"truncated: {VALUE}", 2.0))
    view.stop(Stopped("interrupted", 1, (), 3.0))
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # rich's own SGR and cursor moves
    _inert_on_terminal(drawn.replace("\r", ""))
    assert "[bold]x[/bold]:warning:" in drawn  # shown as written: no markup, no emoji
