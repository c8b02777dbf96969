"""--on-finding: command parsing, stdin payload and environment, timeouts, failures reported."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from logdoctor.errors import ConfigError
from logdoctor.tail.hooks import FindingHook, parse_command

PY = shlex.quote(sys.executable)


@pytest.mark.parametrize(
    "cmd, msg",
    [
        ("", "needs a command"),
        ("'unbalanced", "No closing quotation"),
        ("no-such-program-xyz --flag", "not found"),
    ],
)
def test_bad_commands_are_config_errors(cmd: str, msg: str) -> None:
    with pytest.raises(ConfigError, match=msg):
        parse_command(cmd)


def test_command_gets_the_payload_on_stdin_and_the_code_in_its_environment(tmp_path: Path) -> None:
    out = tmp_path / "got.txt"
    script = (
        "import os,sys; "
        "open(sys.argv[1],'a').write(os.environ['LOGDOCTOR_CODE']+' '+sys.stdin.read()+'\\n')"
    )
    hook = FindingHook(f"{PY} -c {shlex.quote(script)} {shlex.quote(str(out))}")
    hook.submit(json.dumps({"n": 1}), {"LOGDOCTOR_CODE": "LD001"})
    hook.submit(json.dumps({"n": 2}), {"LOGDOCTOR_CODE": "LD101"})
    hook.close(wait=5.0)
    assert out.read_text().splitlines() == ['LD001 {"n": 1}', 'LD101 {"n": 2}']
    assert hook.ran == 2 and hook.errors() == []


def test_overrunning_command_is_killed_and_reported() -> None:
    hook = FindingHook(f"{PY} -c 'import time; time.sleep(30)'", timeout=0.2)
    hook.submit("{}", {})
    hook.close(wait=5.0)
    assert hook.errors() == [f"--on-finding {sys.executable}: killed after 0.2 s"]


def test_failing_command_is_reported() -> None:
    hook = FindingHook(f"{PY} -c 'raise SystemExit(3)'")
    hook.submit("{}", {})
    hook.close(wait=5.0)
    assert hook.errors() == [f"--on-finding {sys.executable}: exited with status 3"]
