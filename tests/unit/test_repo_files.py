"""Files shipped beside the package: the composite action and the finding-code table script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logdoctor.codes import RULES

REPO = Path(__file__).resolve().parents[2]


def test_codes_table_lists_every_rule() -> None:
    out = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "codes_table.py")], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "| code | rule | severity | meaning | what to do |"
    assert [line.split("`")[1] for line in out[2:]] == list(RULES)
    assert out[2].startswith("| `LD001` | `nonfinite-loss` | error | The training loss is NaN")


def test_action_runs_check_and_posts_the_summary() -> None:
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert {"paths", "fail-on", "args"} <= set(action["inputs"])
    script = action["runs"]["steps"][-1]["run"]
    assert "--format github" in script and "--format markdown" in script
    assert "GITHUB_STEP_SUMMARY" in script and "${{" not in script  # inputs only via env


def test_dev_extra_installs_what_the_tests_exercise() -> None:
    """CI installs ``.[dev]``: the TensorBoard reader's tests import tensorboard instead of skipping."""
    import tomllib

    dev = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    names = {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in dev}
    assert {"tensorboard", "jsonschema", "zstandard", "hypothesis"} <= names
    assert {"pandas", "nbclient", "nbformat", "ipykernel"} <= names  # the API's frames and its notebook


@pytest.mark.parametrize("command", [["format", "--check"], ["check"]], ids=["ruff-format", "ruff-check"])
def test_the_code_is_formatted_and_linted(command: list[str]) -> None:
    # CI runs the README's test command only: the formatter and the linter are held by this test
    # (ruff comes with the dev extra; its settings, generated files excluded, are pyproject.toml's)
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "."], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_writers_extra_regenerates_fixtures_and_stays_out_of_dev() -> None:
    """Keras, timm and SpeechBrain only rerun fixtures/writers/gen_writers.py: CI does not install them."""
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {key: {d.split(">")[0].split("=")[0].split("[")[0].strip() for d in deps} for key, deps in extras.items()}
    assert {"keras", "timm", "speechbrain"} <= names["writers"]
    assert not {"keras", "timm", "speechbrain"} & names["dev"]
