"""The Action's steps run as the runner runs them: what they install, how inputs are split, what
they write to GITHUB_OUTPUT and the job summary, and their exit code (paths with blanks included)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.action_support import REPO, pip_args, run_step

STATIC, BUCKETED = REPO / "fixtures" / "compare_static.log", REPO / "fixtures" / "compare_bucketed.jsonl"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "job dir"
    folder.mkdir()
    return folder


def test_install_takes_the_actions_own_checkout_by_default(work: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "my actions" / "logdoctor"  # blanks in the path: one argument
    assert run_step("Install logdoctor", {}, work, action_path=checkout).code == 0
    assert pip_args(work) == ["-m", "pip", "install", "--quiet", str(checkout)]


def test_install_reaches_the_package_index_only_when_asked(work: Path) -> None:
    assert run_step("Install logdoctor", {"package": "logdoctor==1.2.0"}, work).code == 0
    assert pip_args(work) == ["-m", "pip", "install", "--quiet", "logdoctor==1.2.0"]


def _runs(folder: Path, source: Path, names: list[str]) -> None:
    folder.mkdir(exist_ok=True)
    for name in names:
        shutil.copy(source, folder / f"{name}{source.suffix}")


@pytest.mark.parametrize(("base", "runs", "code"), [(STATIC, BUCKETED, 0), (BUCKETED, STATIC, 1)])
def test_baseline_and_a_glob_compare_every_matched_run(work: Path, base: Path, runs: Path, code: int) -> None:
    logs = work / "logs dir"
    _runs(logs, runs, ["run a", "run b"])
    shutil.copy(base, logs / f"known good{base.suffix}")  # matched by the glob too: never its own candidate
    inputs = {
        "paths": "logs dir/*",
        "fail-on": "error",
        "args": "--ignore\nLD502",
        "baseline": f"logs dir/known good{base.suffix}",
    }
    done = run_step("Check training logs", inputs, work)
    assert done.code == code, done.err
    assert done.outputs == {"exit-code": str(code)}
    compare = done.summary[done.summary.index("## logdoctor compare") :]
    assert compare.count("| baseline | candidate | change |") == 2  # one table per matched run


def test_paths_and_args_one_per_line_keep_blanks(work: Path) -> None:
    logs = work / "logs dir"
    _runs(logs, BUCKETED, ["run a", "run b"])
    inputs = {
        "paths": "  logs dir/run a.jsonl  \n\nlogs dir/run b.jsonl\n",
        "args": "--ignore\nLD502\n--select\nLD0, LD1",
    }
    done = run_step("Check training logs", inputs, work)
    assert done.code == 0, done.err
    assert done.outputs == {"exit-code": "0"}
    assert "(in logs dir/)" in done.summary and "| run a.jsonl |" in done.summary and "| run b.jsonl |" in done.summary
    notices = [line for line in done.out.splitlines() if line.startswith("::")]
    files = {line.split("file=")[1].split(",")[0] for line in notices}
    assert files == {"logs dir/run a.jsonl", "logs dir/run b.jsonl"}


def test_info_findings_are_one_notice_per_run(work: Path) -> None:
    log = REPO / "fixtures" / "formats" / "canonical.log"  # two info findings (LD007, LD601) and an error
    done = run_step("Check training logs", {"paths": str(log), "fail-on": "error"}, work)
    assert done.code == 1 and done.outputs == {"exit-code": "1"}
    notices = [line for line in done.out.splitlines() if line.startswith("::notice")]
    assert len(notices) == 2, notices  # the health line and one for both info findings
    assert "title=logdoctor%3A 2 info findings::LD007" in notices[1] and "LD601" in notices[1]
    assert sum(line.startswith("::error") for line in done.out.splitlines()) == 1


def test_no_path_is_bad_input(work: Path) -> None:
    done = run_step("Check training logs", {"paths": "\n \n"}, work)
    assert done.code == 2 and done.outputs == {"exit-code": "2"}
    assert "::error title=logdoctor::the paths input names no log" in done.out


def test_a_baseline_alone_is_bad_input(work: Path) -> None:
    shutil.copy(STATIC, work / "base.log")
    done = run_step("Check training logs", {"paths": "*.log", "baseline": "base.log", "args": "--ignore\nLD502"}, work)
    assert done.code == 2 and done.outputs == {"exit-code": "2"}
    assert "no run to compare with the baseline" in done.out
