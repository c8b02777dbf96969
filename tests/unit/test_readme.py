"""The README stays true to the code: finding codes, set-up commands, fixtures and links."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from logdoctor.codes import RULES

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _setup_commands() -> list[str]:
    """The shell commands of the README's 'Set up' section, one per ```bash block."""
    section = README.split("\n## Set up\n", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S)]


def _words(command: str) -> list[str]:
    """A command's words, with `python -m` and pip's `-q` dropped (the same command, quieter)."""
    words = [w for w in shlex.split(command) if w != "-q"]
    return words[2:] if words[:2] == ["python", "-m"] and words[2:3] == ["pip"] else words


def test_every_code_is_in_the_readme_with_its_rule_name() -> None:
    for code, rule in RULES.items():
        assert f"| `{code}` | `{rule.name}` | {rule.severity.label} |" in README, code


def test_codes_table_is_the_generated_one() -> None:
    table = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "codes_table.py")], capture_output=True, text=True, check=True
    ).stdout
    assert table in README


def test_exactly_two_setup_commands_and_the_second_is_what_ci_runs() -> None:
    commands = _setup_commands()
    assert commands == [
        "pip install -e . && logdoctor analyze fixtures/example.log",
        'pip install -e ".[dev]" && python -m pytest',
    ]
    ci = [
        _words(line.split("||")[0])
        for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    install, test = (_words(part) for part in commands[1].split("&&"))
    assert install in ci and test in ci


def test_the_first_setup_command_names_a_bundled_log() -> None:
    words = shlex.split(_setup_commands()[0].split("&&")[1])
    assert words[:2] == ["logdoctor", "analyze"]
    assert (REPO / words[2]).is_file()


def test_relative_links_resolve() -> None:
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README):
        if target.startswith("bench/RESULTS.md"):  # written by the benchmark run, may lag
            continue
        assert (REPO / target).exists(), target


def test_readme_states_the_fuzz_result() -> None:
    """What the README says; test_fuzz_regressions runs a small campaign for the claim itself."""
    assert "<!-- fuzz-results -->" not in README, "fill in the fuzz campaign's count and result"
    assert re.search(r"fuzz campaigns ran \d[\d,]* cases", README)
    assert "0 crashes" in README
