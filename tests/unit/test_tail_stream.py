"""Streaming renderers: the jsonl contract, plain lines, and the live view drawing to a buffer."""

from __future__ import annotations

import io
import json
import math

import pytest

from logdoctor import codes
from logdoctor.errors import ConfigError
from logdoctor.model import Severity, Verdict
from logdoctor.renderers.jsonreport import finding_dict
from logdoctor.tail.events import (
    FindingRaised,
    FindingRevised,
    FindingWithdrawn,
    Heartbeat,
    Notice,
    Progress,
    SourceSummary,
    Started,
    Stopped,
    TailEvent,
    VerdictChanged,
)
from logdoctor.tail.live import LiveStream, sparkline
from logdoctor.tail.stream import (
    JsonlStream,
    PlainStream,
    StreamRenderer,
    event_dict,
)
from logdoctor.tail.views import STREAM_RENDERERS, stream_renderer

T = 1_800_000_000.0
NAN = codes.finding(
    "LD001",
    "loss is NaN at step 7",
    first_step=7,
    last_step=7,
    line=9,
    evidence={"value": math.nan},
)
VERDICT = Verdict("sorted", 0.87, "length-sorted batches", "Batches arrive sorted by length.")
SUMMARY = SourceSummary("a.log", "text", 10, 10, 2.5, 1, Severity.ERROR, VERDICT, 4.0, 2.4)
EVENTS: list[TailEvent] = [
    Started(("a.log",), T, False, "inotify"),
    Notice("a.log", "format: text", T),
    Progress("a.log", 7, math.nan, 0.5, 7, (3.0, 2.9, math.nan), T),
    FindingRaised("a.log", NAN, 7, T),
    VerdictChanged("a.log", VERDICT, None, 10, T),
    Heartbeat("a.log", 10, 2.5, 10, T),
    Stopped("interrupted", 0, (SUMMARY,), T),
]


def test_jsonl_one_object_per_event_with_the_finding_contract() -> None:
    out = io.StringIO()
    r = JsonlStream(out)
    r.start(EVENTS[0])  # type: ignore[arg-type]
    for e in EVENTS[1:-1]:
        r.handle(e)
    r.stop(EVENTS[-1])  # type: ignore[arg-type]
    docs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [d["event"] for d in docs] == [
        "start",
        "notice",
        "finding",
        "verdict",
        "heartbeat",
        "stop",
    ]
    assert docs[2]["finding"] == finding_dict(NAN) and docs[2]["finding"]["evidence"]["value"] is None
    assert docs[2]["step"] == 7 and docs[2]["source"] == "a.log"
    assert docs[0]["time"] == "2027-01-15T08:00:00.000Z"
    assert docs[3]["verdict"]["batching"] == "sorted" and docs[3]["previous"] is None
    assert docs[4] == {
        "event": "heartbeat",
        "time": docs[4]["time"],
        "source": "a.log",
        "step": 10,
        "loss": 2.5,
        "rows": 10,
    }
    src = docs[5]["sources"][0]
    assert docs[5]["reason"] == "interrupted" and src["worst"] == "error" and src["min_loss"] == 2.4


DIVERGED = codes.finding("LD002", "The loss diverged at step 78", first_step=78, last_step=90)
EXPLAINED = codes.finding("LD301", "jump at 78. Explained by x.", first_step=78, last_step=78)
RETRACTIONS: list[TailEvent] = [
    FindingWithdrawn("a.log", DIVERGED, 590, T),
    FindingRevised("a.log", EXPLAINED, Severity.WARNING, 400, T),
    VerdictChanged("a.log", VERDICT, "grouped", 500, T),
]


def test_retractions_in_jsonl_plain_and_the_summary() -> None:
    docs = [event_dict(e) for e in RETRACTIONS]
    assert [d["event"] for d in docs] == ["withdrawn", "revised", "verdict"]
    assert docs[0]["finding"] == finding_dict(DIVERGED) and docs[0]["step"] == 590
    assert docs[1]["previous_severity"] == "warning" and docs[1]["finding"]["severity"] == "info"
    assert docs[2]["previous"] == "grouped"
    out = io.StringIO()
    r = PlainStream(out)
    for e in RETRACTIONS:
        r.handle(e)
    lines = [line.split(" ", 1)[1] for line in out.getvalue().splitlines()]
    assert lines[0] == (
        "a.log: WITHDRAWN error LD002 divergence (steps 78-90): no longer supported by the analysis at step 590"
    )
    assert lines[1].startswith("a.log: REVISED LD301 loss-regime-change (step 78) warning -> INFO: ")
    assert lines[2].startswith("a.log: verdict revised (grouped ->) sorted (0.87")
    summary = SourceSummary("a.log", "text", 10, 10, 2.5, 1, Severity.WARNING, VERDICT, withdrawn=2)
    assert event_dict(Stopped("idle-timeout", 0, (summary,), T))["sources"][0]["withdrawn"] == 2
    r.handle(Stopped("idle-timeout", 0, (summary,), T))
    assert "1 finding(s), worst warning, 2 withdrawn" in out.getvalue()


def test_live_view_shows_retractions() -> None:
    out = io.StringIO()
    r = LiveStream(out, width=100)
    r.start(EVENTS[0])  # type: ignore[arg-type]
    r.handle(FindingRaised("a.log", DIVERGED, 90, T))
    for e in RETRACTIONS:
        r.handle(e)
    r.stop(Stopped("idle-timeout", 0, (), T))
    text = out.getvalue()
    assert "withdrawn" in text and "LD002 step 78" in text and "revised warning->info" in text
    assert "(1 info, 1 withdrawn)" in text  # what stands, and what was taken back


def test_event_dict_never_holds_nan() -> None:
    for e in EVENTS:
        json.dumps(event_dict(e), allow_nan=False)


def test_plain_lines() -> None:
    out = io.StringIO()
    r = PlainStream(out)
    for e in EVENTS:
        r.handle(e)
    raw = out.getvalue().splitlines()
    lines = [line.split(" ", 1)[1] for line in raw[:-1]] + [raw[-1]]
    assert lines == [
        "following a.log (inotify)",
        "a.log: format: text",
        "a.log: ERROR LD001 nonfinite-loss (step 7): loss is NaN at step 7",
        "a.log: verdict sorted (0.87, length-sorted batches) at step 10: Batches arrive sorted by length.",
        "a.log: step 10 loss 2.5 (10 rows)",
        "stopped (interrupted), exit code 0",
        "  a.log: 10 rows, last step 10, loss 2.5 (first 4, min 2.4), 1 finding(s), worst error, verdict sorted (0.87)",
    ]


def test_live_view_draws_latest_values_verdict_and_findings() -> None:
    out = io.StringIO()
    r = LiveStream(out, width=120)
    r.start(EVENTS[0])  # type: ignore[arg-type]
    for e in EVENTS[1:-1]:
        r.handle(e)
    r.handle(Progress("a.log", 10, 2.5, 0.55, 10, (3.0, 2.8, 2.5), T))
    r.stop(EVENTS[-1])  # type: ignore[arg-type]
    text = out.getvalue()
    for want in (
        "logdoctor tail",
        "a.log",
        "sorted 0.87",
        "LD001 step 7",
        "loss is NaN",
        "2.5",
        "0.55",
        "stopped (interrupted)",
        "worst error",
    ):
        assert want in text, want


@pytest.mark.parametrize("width", [80, 120])
def test_live_view_keeps_step_loss_and_acc_at_narrow_widths(width: int) -> None:
    out = io.StringIO()
    r = LiveStream(out, width=width)
    path = "/home/user/experiments/run-2026-12-03/train_rank0.log"
    r.start(Started((path,), T, False, "inotify"))
    r.handle(Progress(path, 123456, 2.3456, 0.5512, 10, (3.0, 2.9, 2.8) * 10, T))
    r.handle(VerdictChanged(path, VERDICT, None, 10, T))
    r.stop(Stopped("interrupted", 0, (), T))
    table = out.getvalue().split("newest findings")[-2]
    assert all(w in table for w in ("step", "loss", "acc", "123456", "2.346", "0.5512")), table
    assert "train_rank0.log" in table


def test_sparkline_scales_and_marks_nan() -> None:
    assert sparkline((1.0, 2.0, math.nan, 3.0)).plain == "▁▅x█"
    assert sparkline((2.0, 2.0)).plain == "▁▁"


@pytest.mark.parametrize("name", [*STREAM_RENDERERS, "live"])
def test_every_stream_renderer_handles_an_empty_session(name: str) -> None:
    out = io.StringIO()
    r: StreamRenderer = stream_renderer(name, out)
    r.start(Started(("x.log",), T))
    r.stop(Stopped("idle-timeout", 0, (SourceSummary("x.log", None, 0, None, None, 0, None, None),), T))
    assert "x.log" in out.getvalue()


def test_auto_picks_plain_off_a_terminal_and_unknown_is_a_config_error() -> None:
    assert isinstance(stream_renderer("auto", io.StringIO()), PlainStream)
    with pytest.raises(ConfigError, match="unknown tail format"):
        stream_renderer("xml", io.StringIO())


def test_live_view_wraps_long_finding_messages_at_80_columns() -> None:
    long = codes.finding(
        "LD101",
        "The loss rose to 9.87 at step 412, 14.2 robust SDs above its rolling median of 2.31; "
        "the grad norm did not move, ending-word-kept",
        first_step=412,
        last_step=412,
    )
    out = io.StringIO()
    r = LiveStream(out, width=80)
    r.start(EVENTS[0])  # type: ignore[arg-type]
    r.handle(FindingRaised("a.log", long, 412, T))
    r.stop(EVENTS[-1])  # type: ignore[arg-type]
    text = out.getvalue()
    assert "ending-word-kept" in text  # the end of the message is shown, on a wrapped line
    assert "…" not in text
    panel = text.split("stopped (interrupted), exit code")[0]  # a StringIO is not a terminal: no final newline
    assert max(len(line) for line in panel.splitlines()) <= 80
