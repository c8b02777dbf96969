"""Thin data gives an honest, degraded report: what could not be analysed is said, nothing is
blamed on batching, and degenerate series are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures.hostile import write_hostile
from logdoctor.cli import main


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    return write_hostile(tmp_path_factory.mktemp("degraded"))


def _json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    rc = main(["analyze", str(path), "--format", "json"])
    out = capsys.readouterr().out
    assert rc == 0
    return json.loads(out)  # type: ignore[no-any-return]


def _finding(doc: dict, code: str) -> dict:  # type: ignore[type-arg]
    found = [f for f in doc["findings"] if f["code"] == code]
    assert found, [f["code"] for f in doc["findings"]]
    return found[0]  # type: ignore[no-any-return]


@pytest.mark.parametrize(("name", "steps"), [("one_step.log", 1), ("two_steps.log", 2)])
def test_one_and_two_steps_say_what_was_skipped(
    name: str, steps: int, hostile: dict[str, tuple[Path, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _json(hostile[name][0], capsys)
    assert doc["series"]["steps"] == steps
    ld006 = _finding(doc, "LD006")
    assert ld006["evidence"]["n_steps"] == steps and "periodicity" in ld006["evidence"]["skipped"]
    assert ld006["message"].startswith(f"Only {steps} step{'' if steps == 1 else 's'} logged")
    assert doc["verdict"]["batching"] in ("inconclusive", "not_batching")
    # nothing is claimed about the loss; the verdict may only say what it lacks (info); the log ends at
    # step 1 or 2 of the 400 its counter plans, without a word: that stop (LD016) is the one warning
    assert all(f["severity"] == "info" for f in doc["findings"] if f["code"] != "LD016")
    assert [f["code"] for f in doc["findings"] if f["severity"] != "info"] == ["LD016"]
    assert not any(f["code"].startswith(("LD1", "LD2", "LD3", "LD4")) for f in doc["findings"])


def test_twelve_steps_are_too_short_for_periodicity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "short.log"
    log.write_text("".join(f"step {i} | loss={3 - 0.1 * i + 0.3 * (i % 3):.3f}\n" for i in range(1, 13)))
    doc = _json(log, capsys)
    ld006 = _finding(doc, "LD006")
    assert ld006["evidence"]["n_steps"] == 12 and "periodicity" in ld006["message"]
    assert not any(f["code"].startswith("LD2") for f in doc["findings"])


def test_all_nan_and_constant_are_named_not_blamed_on_batching(
    hostile: dict[str, tuple[Path, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    nan = _json(hostile["all_nan.log"][0], capsys)
    assert _finding(nan, "LD001")["severity"] == "error"
    assert nan["verdict"]["batching"] in ("inconclusive", "not_batching")
    const = _json(hostile["constant_loss.log"][0], capsys)
    assert "loss" in _finding(const, "LD007")["message"]
    assert const["verdict"]["batching"] in ("inconclusive", "not_batching")
    assert not any(f["code"].startswith(("LD1", "LD2")) for f in const["findings"])
