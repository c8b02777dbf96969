"""A finding later passes no longer give is withdrawn everywhere: the views, the --on-finding
hook and the final summary (which counts what stands); --idle-timeout 1 ends within ~1 s."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import pytest

from logdoctor import codes
from logdoctor.cli import main
from logdoctor.model import Run
from logdoctor.tail.events import FindingRaised, FindingWithdrawn, Stopped
from logdoctor.tail.runner import TailOptions, follow
from logdoctor.tail.session import HeavyResult, Schedule, SessionOptions
from tests.tail_support import Collect, Writer, losses, step_line

EAGER = SessionOptions(schedule=Schedule(growth=0.0, interval=0.0, min_gap=0.0, duty=1.0))


def _early_only(run: Run) -> HeavyResult:
    """A pass that finds a rise while the run is short, and nothing once it is longer."""
    if run.table.height < 40:
        return [codes.finding("LD002", "rise", first_step=5, last_step=9)], None
    return [], None


def test_a_withdrawn_finding_reaches_the_hook_and_leaves_the_summary(tmp_path: Path) -> None:
    log, got = tmp_path / "train.log", tmp_path / "hook.txt"
    lines = [step_line(i + 1, v) for i, v in enumerate(losses(80))]
    script = "import os,sys; open(sys.argv[1],'a').write(os.environ['LOGDOCTOR_EVENT']+' '+sys.stdin.read()+'\\n')"
    cmd = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {shlex.quote(str(got))}"
    out = Collect()
    writer = Writer(log, lines, delay=0.02)
    writer.start()
    opts = TailOptions(
        (str(log),),
        poll_interval=0.02,
        min_update=0.01,
        heartbeat=60.0,
        idle_timeout=0.8,
        max_seconds=20.0,
        background=False,
        session=EAGER,
        on_finding=cmd,
        parse_gap=0.0,  # every read parsed: a pass sees the run while it is short
    )
    code = follow(opts, out, cheap=[], heavy=_early_only)
    writer.join(5)
    assert code == 0
    kinds = [type(e).__name__ for e in out.events if isinstance(e, FindingRaised | FindingWithdrawn)]
    assert kinds == ["FindingRaised", "FindingWithdrawn"]
    events = [line.split(" ", 1) for line in got.read_text().splitlines()]
    assert [e for e, _ in events] == ["finding", "withdrawn"]
    assert json.loads(events[1][1])["event"] == "withdrawn"
    stop = out.events[-1]
    assert isinstance(stop, Stopped)
    assert stop.summaries[0].findings == 0 and stop.summaries[0].withdrawn == 1
    assert stop.summaries[0].worst is None


@pytest.mark.parametrize("fmt", ["plain", "jsonl"])
def test_idle_timeout_one_second_ends_within_about_a_second(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    log = tmp_path / "train.log"
    log.write_text("".join(step_line(i + 1, v) for i, v in enumerate(losses(50))))
    main(["tail", str(log), "--format", fmt, "--idle-timeout", "0.1"])  # imports done: time the loop
    capsys.readouterr()
    t0 = time.monotonic()
    code = main(["tail", str(log), "--format", fmt, "--idle-timeout", "1"])
    took = time.monotonic() - t0
    capsys.readouterr()
    assert code == 0 and 1.0 <= took < 1.8, took
