"""--on-finding under a supervisor: real hook scripts behind a real tail; nothing outlives tail,
nothing is lost unsaid, and a time limit holds behind a slow hook."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from logdoctor.cli import main


def _log(path: Path) -> Path:
    """A finished log with a dozen findings (NaN runs, regular spikes)."""
    lines = []
    for i in range(1, 400):
        loss = float("nan") if i % 50 == 0 else 9.0 if i % 37 == 0 else 2 + 1 / i
        lines.append(f"step {i}: loss={loss}\n")
    path.write_text("".join(lines))
    return path


def _hook(tmp_path: Path, body: str) -> str:
    script = tmp_path / "hook.sh"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie is dead for our purpose
        return fh.read().split(") ")[1][0] != "Z"


def _pids(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_background_children_of_hooks_die_with_tail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pids = tmp_path / "children"
    hook = _hook(tmp_path, f'sleep 60 &\necho $! >> "{pids}"')
    code = main(["tail", str(_log(tmp_path / "run.log")), "-f", "plain", "--idle-timeout", "1", "--on-finding", hook])
    assert code == 0, capsys.readouterr().err
    children = _pids(pids)
    assert children
    deadline = time.monotonic() + 2
    while any(map(_alive, children)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(_alive, children))


def test_idle_timeout_holds_behind_a_slow_hook_and_the_loss_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pids = tmp_path / "hooks"
    hook = _hook(tmp_path, f'echo $$ >> "{pids}"\nsleep 30')
    log = _log(tmp_path / "run.log")
    t0 = time.monotonic()
    code = main(["tail", str(log), "-f", "plain", "--idle-timeout", "1", "--on-finding", hook])
    took = time.monotonic() - t0
    out = capsys.readouterr().out
    assert code == 0
    # the idle second, the final analysis, the hook's one-second grace (was ~12 s: the hook's timeout)
    assert took < 6, took
    assert "still running when tail stopped, killed" in out
    assert "queued finding(s) not passed on: tail stopped first" in out
    assert not any(map(_alive, _pids(pids)))


def test_hooks_die_with_tail_when_its_reader_leaves(tmp_path: Path) -> None:
    """stdout closed under tail (a BrokenPipeError, not a stop condition) still ends its hooks."""
    import subprocess
    import sys

    pids = tmp_path / "hooks"
    hook = _hook(tmp_path, f'echo $$ >> "{pids}"\nsleep 30')
    log = _log(tmp_path / "run.log")
    reader = f"{sys.executable} -c 'import os, time; os.read(0, 1); time.sleep(1.5)'"
    cmd = (
        f"{sys.executable} -m logdoctor tail '{log}' -f plain --max-seconds 20 --on-finding '{hook}' "
        f"| {reader}; exit ${{PIPESTATUS[0]}}"
    )
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert _pids(pids) and not any(map(_alive, _pids(pids)))
