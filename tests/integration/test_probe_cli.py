"""``logdoctor probe`` as a user runs it: a target file, the gate's exit codes, every report format,
and bad input as one line with exit 2 (the user's own errors named by their file and line)."""

from __future__ import annotations

import json
import os
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from logdoctor.cli import main

SCHEMA = json.loads(files("logdoctor").joinpath("schema/report.schema.json").read_text())

PIPELINE = """\
import random


class Texts:
    \"\"\"400 samples whose lengths are known up front (as a tokenised data set keeps them).\"\"\"

    def __init__(self):
        rng = random.Random(0)
        self.lengths = [rng.randint(8, 300) for _ in range(400)]

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, i):
        raise RuntimeError("a probe never loads a sample")


class SortOnce:
    \"\"\"Sort by length and batch once; only the batch order is shuffled each epoch.\"\"\"

    def __init__(self, data, size=16):
        order = sorted(range(len(data)), key=data.lengths.__getitem__)
        self.batches = [order[i:i + size] for i in range(0, len(order), size)]

    def __iter__(self):
        return iter(random.sample(self.batches, len(self.batches)))


class Reshuffle:
    def __init__(self, data, size=16):
        self.n, self.size = len(data), size

    def __iter__(self):
        order = random.sample(range(self.n), self.n)
        return iter([order[i:i + self.size] for i in range(0, self.n, self.size)])


def build(kind="static", size=16):
    data = Texts()
    print("building the loader")  # a user's print: never on stdout under a report
    return (SortOnce(data, size) if kind == "static" else Reshuffle(data, size)), data


def wrong():
    return {"not": "a sampler"}


def crash(size=16):
    sizes = [size]
    return sizes[3]
"""


@pytest.fixture
def pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    path = tmp_path / "train.py"
    path.write_text(PIPELINE)
    return path


def test_a_static_sampler_fails_the_gate_and_a_reshuffled_one_passes(
    pipeline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["probe", "train.py:build"]) == 1
    out, err = capsys.readouterr()
    assert "ERROR    LD502 static-composition" in out and "Batching: static batch composition" in out
    assert "Priced on these 400 samples' lengths" in out and "padding " in out and "recurrence" in out
    assert "building the loader" in err and "building the loader" not in out
    assert main(["probe", "train.py:build", "--arg", "kind='shuffled'", "-q"]) == 0
    out, _ = capsys.readouterr()
    assert out == "train.py:build: ok (no problems found); no findings; batching: healthy batching (98%)\n"
    assert main(["probe", "train.py:build", "--exit-zero", "-q"]) == 0
    assert main(["probe", "train.py:build", "--ignore", "LD502", "-q"]) == 0


@pytest.mark.parametrize("fmt", ["json", "markdown", "github", "junit", "html"])
def test_every_report_format_writes_the_probe(pipeline: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "train.py:build", "-f", fmt, "--epochs", "2"]) == 1
    out = capsys.readouterr().out
    assert "LD502" in out
    if fmt == "json":
        doc = json.loads(out)
        jsonschema.validate(doc, SCHEMA)
        s = doc["sampler"]
        assert (s["epochs"], s["batches"], s["batch_size"], s["samples"]) == (2, 50, 16, 400)
        assert s["recurrence_by_epoch"] == [0.0, 1.0] and s["fix"]["sequences"] == 400
        assert doc["source"]["format"] == "probe" and doc["verdict"]["batching"] == "static"
    if fmt in ("markdown", "html"):
        assert "padding" in out and "the fix" in out


def test_the_users_files_are_never_written(pipeline: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = {p.name: p.stat().st_mtime_ns for p in pipeline.parent.iterdir()}
    main(["probe", "train.py:build", "-f", "json"])
    assert {p.name: p.stat().st_mtime_ns for p in pipeline.parent.iterdir()} == before
    assert main(["probe", "train.py:build", "-o", "train.py"]) == 2  # the output cannot be the target's file
    assert pipeline.read_text() == PIPELINE


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere.py:build"], "nowhere.py: no such file"),
        (["train.py"], "expected path/to/train.py:function or package.module:function"),
        (["train.py:absent"], "train.py has no 'absent' (it defines: Reshuffle, SortOnce, Texts, build, crash, wrong)"),
        (["train.py:wrong"], "train.py:wrong returned dict; expected a torch DataLoader, a Sampler or BatchSampler"),
        (["train.py:build", "--arg", "oops"], "--arg expects key=value"),
        (["train.py:build", "-f", "png"], "--format: a probe writes text, json, markdown, github, junit, html"),
        (["train.py:build", "--lengths", "missing.txt"], "missing.txt"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    pipeline: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["probe", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_exception_in_the_users_code_names_their_file_and_line(
    pipeline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["probe", "train.py:crash"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"logdoctor: error: train.py:crash(): IndexError: list index out of range at "
        f"{os.path.realpath(pipeline)}:50 in crash"
    )
    assert main(["probe", "train.py:crash", "-v"]) == 2
    err = capsys.readouterr().err
    assert "the traceback in your code" in err and "return sizes[3]" in err and "logdoctor/probe" not in err


def test_seed_makes_a_sampler_that_draws_from_the_global_generator_repeatable(
    pipeline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def padding(*seed: str) -> object:
        main(["probe", "train.py:build", "--arg", "kind='shuffled'", *seed, "-f", "json", "--epochs", "1"])
        return json.loads(capsys.readouterr().out)["sampler"]["padding_efficiency_per_batch"]

    assert padding("--seed", "3") == padding("--seed", "3")
    assert padding() != padding()  # unseeded, the user's own random draws differ from run to run
