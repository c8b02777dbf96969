"""Finding and calling a probe target: the forms it takes, the arguments it gets, and the user's
errors shown as theirs (file and line), never as logdoctor's."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from logdoctor.errors import ConfigError, InputError
from logdoctor.probing.target import load_target, parse_args, split_target
from logdoctor.probing.usercode import UserCodeError

TRAIN = """\
import sys

BATCHES = [[0, 1], [2, 3]]


def build(size=2, shuffled=False, name="x"):
    return {"size": size, "shuffled": shuffled, "name": name}


def broken():
    table = {}
    return table["missing"]


def noisy():
    print("hello from the user's code")
    return BATCHES
"""


@pytest.fixture
def train(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(TRAIN)
    return path


def test_arguments_are_python_literals_or_text() -> None:
    assert parse_args(["size=8", "shuffled=True", "name=abc", "ratio=0.5", "sizes=[1, 2]", "none=None"]) == {
        "size": 8,
        "shuffled": True,
        "name": "abc",
        "ratio": 0.5,
        "sizes": [1, 2],
        "none": None,
    }
    with pytest.raises(ConfigError, match="key=value"):
        parse_args(["8"])


@pytest.mark.parametrize("target", ["train.py", "train.py:", ":build", "pkg.mod:not-a-name"])
def test_a_malformed_target_names_the_expected_forms(target: str) -> None:
    with pytest.raises(ConfigError, match=re.escape("path/to/train.py:function or package.module:function")):
        split_target(target)


def test_a_file_target_is_called_with_its_arguments(train: Path) -> None:
    assert load_target(f"{train}:build", {"size": 8}) == {"size": 8, "shuffled": False, "name": "x"}
    assert load_target(f"{train}:BATCHES") == [[0, 1], [2, 3]]  # not callable: the object itself


def test_no_bytecode_is_written_beside_the_users_file(train: Path) -> None:
    load_target(f"{train}:build")
    assert sorted(p.name for p in train.parent.iterdir()) == ["train.py"]


def test_what_the_users_code_prints_stays_off_stdout(train: Path, capsys: pytest.CaptureFixture[str]) -> None:
    load_target(f"{train}:noisy")
    out, err = capsys.readouterr()
    assert out == "" and "hello from the user's code" in err


def test_a_module_target_is_imported_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "mypipeline"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "data.py").write_text("def loader(n=3):\n    return [[i] for i in range(n)]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert load_target("mypipeline.data:loader", {"n": 2}) == [[0], [1]]
    assert not (pkg / "__pycache__").exists()


def test_missing_things_are_one_line_each(train: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_target(f"{tmp_path / 'nope.py'}:build")
    with pytest.raises(ConfigError, match=r"has no 'nothing' \(it defines: broken, build, noisy\)"):
        load_target(f"{train}:nothing")
    with pytest.raises(InputError, match=re.escape("no module named 'surely_not_a_module_here.x'")):
        load_target("surely_not_a_module_here.x:f")


def test_the_users_exception_is_shown_as_theirs(train: Path) -> None:
    with pytest.raises(UserCodeError) as caught:
        load_target(f"{train}:broken")
    msg = str(caught.value)
    assert msg.startswith(f"{train}:broken(): KeyError: 'missing' at {train}:12 in broken")
    assert "logdoctor" not in msg.replace("_logdoctor_probe_", "")
    assert any("train.py" in frame for frame in caught.value.frames)
    assert not any("/logdoctor/" in frame for frame in caught.value.frames)


def test_an_import_that_fails_or_exits_is_the_users(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import json\n\nx = json.loads('{')\n")
    with pytest.raises(UserCodeError, match=rf"importing {bad}: JSONDecodeError: .* at {bad}:3 in <module>"):
        load_target(f"{bad}:f")
    script = tmp_path / "script.py"
    script.write_text("import sys\nsys.exit(2)\n")
    with pytest.raises(UserCodeError, match=r"the code exited .*SystemExit 2"):
        load_target(f"{script}:f")
