"""Tail mode end to end against real growing files written by a thread or another process."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.cli import main
from logdoctor.detectors.base import Analyzer
from logdoctor.model import Severity
from logdoctor.tail.events import FindingRaised, Notice, Stopped, VerdictChanged
from logdoctor.tail.runner import TailOptions, follow
from logdoctor.tail.session import HeavyFn, Schedule, SessionOptions
from tests.tail_support import (
    Collect,
    NanDetector,
    SpikeDetector,
    Writer,
    losses,
    regular_spikes_heavy,
    step_line,
)

REPO = Path(__file__).resolve().parents[2]
EAGER = SessionOptions(schedule=Schedule(growth=0.0, interval=0.0, min_gap=0.0, duty=1.0))


def _follow(
    patterns: Sequence[str],
    writers: Sequence[threading.Thread] = (),
    *,
    cheap: Sequence[Analyzer] = (),
    heavy: HeavyFn | None = None,
    **kw: object,
) -> tuple[int, Collect]:
    opts = {
        "poll_interval": 0.02,
        "min_update": 0.01,
        "parse_gap": 0.0,  # every read parsed: the order of events at this fine grain
        "heartbeat": 60.0,
        "idle_timeout": 0.5,
        "max_seconds": 8.0,
        "background": False,
        "session": EAGER,
        **kw,
    }
    out = Collect()
    for w in writers:
        w.start()
    code = follow(
        TailOptions(tuple(patterns), **opts),
        out,
        cheap=cheap,  # type: ignore[arg-type]
        heavy=heavy or (lambda run: ((), None)),
    )
    for w in writers:
        w.join(5)
    return code, out


def _stopped(c: Collect) -> Stopped:
    last = c.events[-1]
    assert isinstance(last, Stopped)
    return last


def test_growing_file_raises_nan_spikes_then_the_pattern_in_order(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    vals = losses(260, nan_at=(40,), spike_every=60)
    lines = [step_line(i + 1, v) for i, v in enumerate(vals)]
    code, c = _follow(
        [str(log)],
        [Writer(log, lines)],
        cheap=[NanDetector(), SpikeDetector()],
        heavy=regular_spikes_heavy(),
    )
    assert code == 0 and _stopped(c).reason == "idle-timeout"
    assert c.kinds()[0] == "Started" and c.started and c.stopped
    assert c.findings() == [
        ("LD001", 40),
        ("LD101", 60),
        ("LD101", 120),
        ("LD101", 180),
        ("LD103", None),
        ("LD101", 240),
    ]
    verdicts = [e.verdict.batching for e in c.events if isinstance(e, VerdictChanged)]
    assert verdicts == ["inconclusive", "sorted"]
    summary = _stopped(c).summaries[0]
    assert summary.rows == 260 and summary.last_step == 260 and summary.worst == Severity.ERROR
    raised_at = [e.step for e in c.events if isinstance(e, FindingRaised)]
    assert raised_at == sorted(raised_at) and raised_at[0] >= 40  # raised as they arrive


def test_rotation_and_truncation_midway(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    vals = losses(300, nan_at=(250,))
    lines = [step_line(i + 1, v) for i, v in enumerate(vals)]
    actions = {100: lambda: log.rename(tmp_path / "train.log.1"), 200: lambda: os.truncate(log, 0)}
    code, c = _follow([str(log)], [Writer(log, lines, actions=actions)], cheap=[NanDetector()])
    assert code == 0
    # "waiting for the file to appear" comes first when tail starts before the writer's first line (loaded machine)
    notices = [e.message for e in c.events if isinstance(e, Notice) and e.message != "waiting for the file to appear"]
    assert notices == [
        "format: text",
        "file replaced: reading it from the start",
        "file truncated: reading it from the start",
    ]
    assert c.findings() == [("LD001", 250)]
    s = _stopped(c).summaries[0]
    assert s.last_step == 300 and 250 <= s.rows <= 300  # copytruncate may lose unread lines


def test_exit_on_error_and_on_finding_command(tmp_path: Path) -> None:
    log, got = tmp_path / "train.log", tmp_path / "hook.jsonl"
    lines = [step_line(i + 1, v) for i, v in enumerate(losses(40, nan_at=(30,)))]
    never = threading.Event()
    writer = Writer(log, lines, actions={39: never.wait})  # blocks after step 39 until released
    script = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read())"
    cmd = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {shlex.quote(str(got))}"
    writer.start()
    code, c = _follow([str(log)], cheap=[NanDetector()], exit_on=Severity.ERROR, on_finding=cmd, idle_timeout=None)
    never.set()
    writer.join(5)
    assert code == 1 and _stopped(c).reason == "exit-on" and _stopped(c).exit_code == 1
    assert c.findings() == [("LD001", 30)]
    doc = json.loads(got.read_text())
    assert doc["event"] == "finding" and doc["finding"]["code"] == "LD001" and doc["finding"]["first_step"] == 30


def test_waits_for_a_file_that_appears_later(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "later.log"
    log.parent.mkdir()
    lines = [step_line(i + 1, v) for i, v in enumerate(losses(20, nan_at=(5,)))]
    code, c = _follow([str(log)], [Writer(log, lines, start_delay=0.2)], cheap=[NanDetector()], idle_timeout=1.0)
    assert (
        code == 0 and c.kinds()[:2] == ["Started", "Notice"] and c.events[1].message == "waiting for the file to appear"
    )
    assert c.findings() == [("LD001", 5)] and _stopped(c).summaries[0].rows == 20


def test_glob_follows_each_rank_separately(tmp_path: Path) -> None:
    r0, r1 = tmp_path / "rank0.log", tmp_path / "rank1.log"
    r0.write_text("")
    w0 = Writer(r0, [step_line(i + 1, v) for i, v in enumerate(losses(30))])
    w1 = Writer(r1, [step_line(i + 1, v) for i, v in enumerate(losses(30, nan_at=(12,)))], start_delay=0.1)
    code, c = _follow([str(tmp_path / "rank*.log")], [w0, w1], cheap=[NanDetector()])
    assert code == 0
    nan = [e for e in c.events if isinstance(e, FindingRaised)]
    assert [(e.source, e.finding.first_step) for e in nan] == [(str(r1), 12)]
    assert {(s.source, s.rows) for s in _stopped(c).summaries} == {(str(r0), 30), (str(r1), 30)}


def test_from_end_reports_only_what_is_written_afterwards(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("".join(step_line(i + 1, v) for i, v in enumerate(losses(20, nan_at=(3,)))))
    later = [step_line(i + 21, v) for i, v in enumerate(losses(20, nan_at=(7,)))]
    code, c = _follow([str(log)], [Writer(log, later, start_delay=0.1)], cheap=[NanDetector()], from_end=True)
    assert code == 0 and c.findings() == [("LD001", 27)] and _stopped(c).summaries[0].rows == 20


def test_jsonl_through_main_matches_batch_analysis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "train.log"
    log.write_text(
        "config: lr=3e-4\n"
        + "".join(step_line(i + 1, v) for i, v in enumerate(losses(120, nan_at=(50,), spike_every=40)))
    )
    rc = main(
        [
            "tail",
            str(log),
            "--format",
            "jsonl",
            "--max-seconds",
            "0.6",
            "--poll-interval",
            "0.05",
            "--heartbeat",
            "0.2",
        ]
    )
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [d["event"] for d in docs]
    assert rc == 0 and kinds[0] == "start" and kinds[-1] == "stop" and "heartbeat" in kinds
    assert all(d["step"] == 120 for d in docs if d["event"] == "heartbeat")
    report = pipeline.analyze(pipeline.load(str(log)))
    # a followed log short of its plan is still running: the stop before the plan is batch's alone
    batch = {(f.code, f.first_step) for f in report.findings if f.code not in ("LD006", "LD016")}
    tail = {(d["finding"]["code"], d["finding"]["first_step"]) for d in docs if d["event"] == "finding"}
    assert batch <= tail
    verdicts = [d["verdict"]["batching"] for d in docs if d["event"] == "verdict"]
    assert verdicts[-1] == report.verdict.batching == docs[-1]["sources"][0]["verdict"]["batching"]
    assert docs[-1]["sources"][0]["rows"] == 120 and docs[-1]["reason"] == "max-seconds"


@pytest.mark.parametrize("sig, reason", [(signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated")])
def test_ctrl_c_and_sigterm_end_cleanly_with_a_summary(tmp_path: Path, sig: signal.Signals, reason: str) -> None:
    log = tmp_path / "train.log"
    log.write_text("".join(step_line(i + 1, v) for i, v in enumerate(losses(10))))
    proc = subprocess.Popen(
        [sys.executable, "-m", "logdoctor", "tail", str(log), "--format", "plain"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    second = proc.stdout.readline()  # the file has been read: "format: text"
    proc.send_signal(sig)
    rest, err = proc.communicate(timeout=10)
    assert "following" in first and "format: text" in second and proc.returncode == 0, err
    assert f"stopped ({reason}), exit code 0" in rest and "10 rows, last step 10" in rest


@pytest.mark.parametrize(
    "args, msg",
    [
        (["tail"], "tail needs a log file or --glob PATTERN"),
        (["tail", "x.log", "--exit-on", "info"], "--exit-on expects warning or error"),
        (["tail", "x.log", "--on-finding", "no-such-program-xyz"], "not found"),
        (["tail", "x.log", "--format", "xml"], "unknown tail format"),
    ],
)
def test_bad_tail_options_are_exit_2(args: list[str], msg: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    assert msg in capsys.readouterr().err


def test_a_directory_is_refused_and_the_stream_still_stops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tail", str(tmp_path), "--format", "jsonl", "--max-seconds", "1"]) == 2
    out, err = capsys.readouterr()
    docs = [json.loads(line) for line in out.splitlines()]
    assert [d["event"] for d in docs] == ["start", "stop"] and docs[-1]["reason"] == "error"
    assert "is a directory" in err and docs[-1]["exit_code"] == 2


def test_lines_gathered_between_parses_still_raise_a_nan_at_once_and_all_count(tmp_path: Path) -> None:
    """With a parse gap far longer than the run, a NaN still stops the run (its line is parsed
    at once) and the summary counts every line read (what was kept is parsed at the stop)."""
    log = tmp_path / "train.log"
    lines = [step_line(i + 1, v) for i, v in enumerate(losses(120, nan_at=(60,)))]
    code, c = _follow(
        [str(log)],
        [Writer(log, lines, delay=0.01)],
        cheap=[NanDetector()],
        exit_on=Severity.ERROR,
        idle_timeout=None,
        parse_gap=60.0,
    )
    assert code == 1 and _stopped(c).reason == "exit-on"
    assert c.findings() == [("LD001", 60)]
    code, c = _follow(
        [str(tmp_path / "late.log")],
        [Writer(tmp_path / "late.log", lines[:50], delay=0.005)],
        cheap=[NanDetector()],
        parse_gap=60.0,
    )
    s = _stopped(c).summaries[0]
    assert code == 0 and s.rows == 50 and s.last_step == 50


def test_a_crash_appended_to_a_live_log_is_raised_and_a_run_short_of_its_plan_is_not_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Tail runs the batch analysis on the lines so far: a traceback written after the last row is
    LD010 at once; before it, the run short of its plan is still running (no LD016)."""
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {i}/1000 | loss {3 - i / 100:.4f}\n" for i in range(1, 121)))
    crash = [
        "Traceback (most recent call last):\n",
        '  File "train.py", line 9, in <module>\n',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n",
    ]
    writer = Writer(log, crash, start_delay=0.8)
    writer.start()
    rc = main(["tail", str(log), "--format", "jsonl", "--max-seconds", "2.5", "--poll-interval", "0.05"])
    writer.join(5)
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    found = [d["finding"] for d in docs if d["event"] == "finding"]
    crashed = [f for f in found if f["code"] == "LD010"]
    assert rc == 0 and len(crashed) == 1 and crashed[0]["severity"] == "error"
    assert crashed[0]["line"] == 123 and crashed[0]["evidence"]["kind"] == "cuda_oom"
    assert not [f for f in found if f["code"] == "LD016"]
    batch = pipeline.analyze(pipeline.load(str(log)))
    assert [f.code for f in batch.findings if f.code == "LD010"] == ["LD010"]
