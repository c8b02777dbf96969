"""README's promises per command: configuration (validated, honoured by every command), exit codes,
the JSON error document, and what a directory stands for."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from logdoctor.cli import main

REPO = Path(__file__).resolve().parents[2]
INSTABILITY = REPO / "fixtures" / "spiky.log"  # loss spikes with grad-norm spikes: LD101 warnings, LD102
SCHEMA = json.loads(files("logdoctor").joinpath("schema/report.schema.json").read_text())
TAIL = ["--format", "jsonl", "--idle-timeout", "0.3", "--poll", "--poll-interval", "0.05"]


def _args(command: str, log: Path) -> list[str]:
    """The command on one log, as a user would type it (outputs into the current folder)."""
    return {
        "analyze": ["analyze", str(log), "-q"],
        "check": ["check", str(log), "-q"],
        "tail": ["tail", str(log), *TAIL],
        "plot": ["plot", str(log), "-o", "fig.svg"],
        "parse": ["parse", str(log), "-o", "steps.csv"],
    }[command]


COMMANDS = ["analyze", "check", "tail", "plot", "parse"]
BAD_CONFIGS = [
    ("[spikes]\nwindow = -5\n", "spikes.window must be an integer >= 3, got -5"),
    ('[spikes]\nz_threshold = "8"\n', "spikes.z_threshold must be a number > 0, got '8'"),
    ("[changepoints]\nmax_blocks = 0\n", "changepoints.max_blocks must be an integer >= 1, got 0"),
    ('[batching]\nmin_lag1 = "high"\n', "batching.min_lag1 must be a number in [-1, 1], got 'high'"),
    ("[spikes]\nz = 8\n", "unknown option spikes.z (known: z_threshold, "),
    ("fail_on = 'error'\n", "unknown key 'fail_on' (known: select, "),
    ("map = { nonsense = 'x' }\n", "map: target 'nonsense' is not a known column"),
]


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("toml", "message"), BAD_CONFIGS, ids=[m.split(" ")[0] for _, m in BAD_CONFIGS])
@pytest.mark.parametrize("how", ["found", "--config"])
def test_bad_configuration_is_one_line_and_exit_2_for_every_command(
    command: str, toml: str, message: str, how: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """README "Configuration": unknown keys and options are errors; "Exit codes": 2, one line."""
    cfg = here / "logdoctor.toml"
    cfg.write_text(toml)
    extra = ["--config", str(cfg)] if how == "--config" else []
    assert main([*_args(command, INSTABILITY), *extra]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"logdoctor: error: {cfg}: {message}") and err.count("\n") == 1, err
    assert out == "" and not (here / "fig.svg").exists() and not (here / "steps.csv").exists()


def test_pyproject_errors_name_the_section(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "pyproject.toml").write_text("[tool.logdoctor.spikes]\nwindow = -5\n")
    assert main(["check", str(INSTABILITY)]) == 2
    assert capsys.readouterr().err == (
        f"logdoctor: error: [tool.logdoctor] in {here / 'pyproject.toml'}: "
        "spikes.window must be an integer >= 3, got -5\n"
    )


def _codes(command: str, capsys: pytest.CaptureFixture[str]) -> set[str]:
    out = capsys.readouterr().out
    if command == "tail":
        return {json.loads(line)["finding"]["code"] for line in out.splitlines() if '"finding"' in line}
    return {f["code"] for f in json.loads(out)["findings"]}


def _findings_run(command: str, extra: list[str]) -> list[str]:
    if command == "tail":
        return ["tail", str(INSTABILITY), *TAIL, *extra]
    return [command, str(INSTABILITY), "-f", "json", *extra]


@pytest.mark.parametrize("command", ["analyze", "check", "tail"])
def test_thresholds_and_selection_from_the_file_reach_every_command(
    command: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same configuration resolution for analyze, check and tail (tail used to ignore it)."""
    main(_findings_run(command, []))
    assert "LD101" in _codes(command, capsys)
    (here / "logdoctor.toml").write_text("[spikes]\nz_threshold = 1000\n")
    main(_findings_run(command, []))
    assert "LD101" not in _codes(command, capsys)
    (here / "logdoctor.toml").write_text("ignore = ['LD1']\n")
    main(_findings_run(command, []))
    assert not {c for c in _codes(command, capsys) if c.startswith("LD1")}
    (here / "logdoctor.toml").write_text("select = ['loss-spike']\n")
    main(_findings_run(command, []))
    assert _codes(command, capsys) == {"LD101"}


@pytest.mark.parametrize("command", ["analyze", "check", "tail"])
def test_command_line_selection_wins_over_the_file(
    command: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "logdoctor.toml").write_text("select = ['loss-spike']\n")
    main(_findings_run(command, ["--select", "grad-norm-spike"]))
    assert _codes(command, capsys) == {"LD102"}
    main(_findings_run(command, ["--select", "LD1", "--ignore", "LD101,LD104"]))
    assert _codes(command, capsys) == {"LD102"}
    assert main(_findings_run(command, ["--select", "LD9"])) == 2
    assert "--select: 'LD9' is not a finding code" in capsys.readouterr().err


def _objective_log(here: Path) -> Path:
    log = here / "run.jsonl"
    log.write_text("".join(json.dumps({"step": i, "objective": 3 - 0.01 * i}) + "\n" for i in range(1, 80)))
    return log


def _tail_rows(capsys: pytest.CaptureFixture[str]) -> int:
    stop = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert stop["event"] == "stop"
    return int(stop["sources"][0]["rows"])


@pytest.mark.parametrize("command", COMMANDS)
def test_the_map_of_the_file_reaches_every_command(
    command: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _objective_log(here)
    if command == "tail":  # a live log without a loss yet is no error: tail keeps waiting
        assert main(_args(command, log)) == 0
        assert _tail_rows(capsys) == 0
    else:
        assert main(_args(command, log)) == 2  # no loss without the map
        assert "no record holds a training loss" in capsys.readouterr().err
    (here / "logdoctor.toml").write_text("map = { loss = 'objective' }\n")
    assert main(_args(command, log)) == 0
    if command == "tail":
        assert _tail_rows(capsys) == 79
    if command == "parse":
        assert (here / "steps.csv").read_text().splitlines()[:2] == ["step,loss,line_no", "1,2.99,1"]


def test_readme_configuration_example_is_accepted_by_every_command(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Configuration") :]
    example = re.search(r"```toml\n(.*?)```", section, re.S)
    assert example is not None
    (here / "pyproject.toml").write_text(example.group(1))
    for command in COMMANDS:
        rc = main(_args(command, INSTABILITY))
        assert rc in (0, 1), (command, capsys.readouterr().err)
    capsys.readouterr()


@pytest.mark.parametrize(
    ("args", "code"),
    [
        # README "Exit codes": 0 report written (findings or not), 2 unreadable input
        (["analyze", str(INSTABILITY), "-q"], 0),
        (["analyze", "missing.log", "-q"], 2),
        (["analyze", str(INSTABILITY), "missing.log", "-q", "-j", "1"], 2),
        (["analyze", str(INSTABILITY), "--bogus"], 2),
        # check: 0 nothing at/above --fail-on, 1 a finding at/above it, --exit-zero, 2 bad input
        (["check", str(INSTABILITY), "-q"], 1),
        (["check", str(INSTABILITY), "-q", "--fail-on", "error"], 0),
        (["check", str(INSTABILITY), "-q", "--exit-zero"], 0),
        (["check", "missing.log", "-q", "--exit-zero"], 2),
        (["check", str(INSTABILITY), "--fail-on", "fatal"], 2),
        # tail: 0 on --idle-timeout, 1 when a finding hits --exit-on, 2 on usage errors
        (["tail", str(INSTABILITY), *TAIL], 0),
        (["tail", str(INSTABILITY), *TAIL, "--exit-on", "warning"], 1),
        (["tail", str(INSTABILITY), *TAIL, "--exit-on", "error"], 0),
        (["tail", str(INSTABILITY), *TAIL, "--exit-on", "fatal"], 2),
        (["tail", *TAIL], 2),
        # plot and parse: 0 written, 2 bad input or destination
        (["plot", str(INSTABILITY), "-o", "fig.svg"], 0),
        (["plot", "missing.log", "-o", "fig.svg"], 2),
        (["plot", str(INSTABILITY), "-o", "fig.jpg"], 2),
        (["parse", str(INSTABILITY), "-o", "steps.csv"], 0),
        (["parse", "missing.log", "-o", "steps.csv"], 2),
        (["parse", str(INSTABILITY), "-o", "steps.xlsx"], 2),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else str(v),
)
def test_readme_exit_codes_per_command(
    args: list[str], code: int, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if code == 2:
        lines = [line for line in err.splitlines() if line.startswith("logdoctor: error:")]
        assert lines or "Usage" in err or "Error" in err, err


@pytest.mark.parametrize("command", ["analyze", "check"])
def test_json_with_a_single_failing_input_prints_the_error_document(
    command: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """README "JSON output": an input that fails is {format_version, source: {path}, error}."""
    assert main([command, "missing.log", "-f", "json"]) == 2
    out, err = capsys.readouterr()
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    assert doc == {
        "format_version": 4,
        "source": {"path": "missing.log"},
        "error": {"message": "missing.log: no such file or directory", "exit_code": 2},
    }
    assert err == "logdoctor: error: missing.log: no such file or directory\n"


def test_directory_leaves_out_manifest_readme_and_skips_files_without_steps(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = here / "runs"
    runs.mkdir()
    (runs / "run.log").write_text(INSTABILITY.read_text())
    (runs / "MANIFEST.tsv").write_text("file\tsource\nrun.log\tsim\n")
    (runs / "README.txt").write_text("These are the logs of the sweep.\n")
    (runs / ".hidden.log").write_text("junk\n")
    (runs / "notes.txt").write_text("lr sweep, see run.log\n")
    (runs / "empty.log").write_text("")
    assert main(["analyze", str(runs), "-f", "json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["source"]["path"] == str(runs / "run.log")  # one run: its report alone
    assert err.splitlines() == [
        f"logdoctor: note: skipped {runs / 'empty.log'}: file is empty (found in a directory)",
        f"logdoctor: note: skipped {runs / 'notes.txt'}: no training steps found in 1 lines "
        "(skipped: no step: 1; keys seen: none) (found in a directory)",
    ]
    assert main(["check", str(runs), "--fail-on", "error", "-q"]) == 0  # skipped files set no exit code
    capsys.readouterr()
    # named on the command line, a file without steps is an input error as before
    assert main(["analyze", str(runs / "notes.txt"), "-q"]) == 2
    # a directory where nothing holds training steps: every file is an error
    (runs / "run.log").unlink()
    assert main(["analyze", str(runs), "-q", "-j", "1"]) == 2
    assert "note: skipped" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("command", "flag", "message"),
    [
        (c, spec, spec[1])
        for c, flags in {
            "analyze": ["map", "spe", "select", "ignore", "memory", "stride"],
            "check": ["map", "spe", "select", "ignore", "memory", "fail-on", "stride"],
            "tail": ["map", "spe", "select", "ignore", "stride"],
            "plot": ["map", "spe", "memory"],
            "parse": ["map", "spe", "stride"],
        }.items()
        for flag, spec in {
            "map": (["--map", "nonsense=x"], "--map target 'nonsense' is not a known column"),
            "spe": (["--steps-per-epoch", "0"], "Invalid value for '--steps-per-epoch'"),
            "select": (["--select", "LD9"], "--select: 'LD9' is not a finding code"),
            "ignore": (["--ignore", "nope"], "--ignore: 'nope' is not a finding code"),
            "memory": (["--max-memory", "lots"], "lots"),
            "fail-on": (["--fail-on", "fatal"], "--fail-on: unknown severity 'fatal'"),
            "stride": (["--stride", "0"], "--stride: expected an integer in [1, "),
        }.items()
        if flag in flags
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_bad_command_line_options_are_exit_2_for_every_command(
    command: str, flag: tuple[list[str], str], message: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The flags that reach the same settings as the file are checked the same way (exit 2)."""
    args, _ = flag
    assert main([*_args(command, INSTABILITY), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    assert not (here / "fig.svg").exists() and not (here / "steps.csv").exists()


def test_ci_formats_document_a_single_failing_input(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """JUnit and GitHub annotations report a lone unreadable input too (CI would otherwise show nothing)."""
    assert main(["check", "missing.log", "-f", "junit"]) == 2
    assert '<error type="input" message="missing.log: no such file or directory" />' in capsys.readouterr().out
    assert main(["check", "missing.log", "-f", "github"]) == 2
    assert capsys.readouterr().out.startswith("::error file=missing.log,title=logdoctor::missing.log: no such file")
    assert main(["check", "missing.log", "-f", "markdown"]) == 2
    assert capsys.readouterr().out == ""  # the error line on stderr is the whole story
