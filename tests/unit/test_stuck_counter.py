"""A step counter that never advances, or stops advancing, is named as such (LD008), the same in analyze
and tail; it is neither "written twice" nor "went backwards", and tail counts the rows analyze counts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from logdoctor.cli import main

TAIL = ["--format", "jsonl", "--idle-timeout", "0.3", "--poll", "--poll-interval", "0.05"]


def _analyze(log: Path, capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    main(["analyze", str(log), "--format", "json"])
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def _tail(log: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:  # type: ignore[type-arg]
    assert main(["tail", str(log), *TAIL]) == 0
    return [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()]


def _ld008(findings: list[dict]) -> list[dict]:  # type: ignore[type-arg]
    return [f for f in findings if f["code"] == "LD008"]


def test_identical_lines_never_advance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Was: "OK, No problems found, 999,999 records written twice"."""
    log = tmp_path / "same.log"
    log.write_text("step 0 loss 2.3\n" * 5000)
    doc = _analyze(log, capsys)
    (f,) = _ld008(doc["findings"])
    assert f["message"].startswith("The step counter never advances: 5,000 lines at step 0")
    assert f["evidence"]["records"] == 5000 and f["evidence"]["never_advances"] is True
    assert doc["status"] == "warning" and doc["series"]["duplicate_steps"] == 0
    events = _tail(log, capsys)
    told = [e["finding"] for e in events if e["event"] == "finding" and e["finding"]["code"] == "LD008"]
    assert told and told[-1]["message"] == f["message"]
    assert events[-1]["sources"][0]["rows"] == doc["structure"]["rows"] == 1  # tail counted 5,000


def test_constant_step_with_changing_loss_is_not_going_backwards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: "Step numbers went backwards 19986 time(s)"."""
    rng = np.random.default_rng(0)
    log = tmp_path / "const.log"
    log.write_text("".join(f"step 7 loss {2 + v:.4f}\n" for v in rng.random(3000)))
    doc = _analyze(log, capsys)
    codes = {f["code"] for f in doc["findings"]}
    assert "LD008" in codes and "LD005" not in codes
    assert "3,000 lines at step 7" in _ld008(doc["findings"])[0]["message"]
    events = _tail(log, capsys)
    assert not [e for e in events if e["event"] == "finding" and e["finding"]["code"] == "LD005"]
    assert events[-1]["sources"][0]["rows"] == 1


def test_a_counter_that_stops_mid_run_names_its_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "late.log"
    head = "".join(f"step {i} loss {3 - 0.001 * i:.4f}\n" for i in range(1, 301))
    log.write_text(head + "".join(f"step 300 loss {2.6 + 0.001 * (i % 7):.4f}\n" for i in range(700)))
    doc = _analyze(log, capsys)
    (f,) = _ld008(doc["findings"])
    assert "701 lines in a row at step 300 (lines 300-1,000)" in f["message"]
    assert not f["evidence"]["never_advances"] and "LD005" not in {x["code"] for x in doc["findings"]}
    assert doc["structure"]["rows"] == 300
    assert _tail(log, capsys)[-1]["sources"][0]["rows"] == 300


@pytest.mark.parametrize("per_step", [1, 2, 8])
def test_steps_written_by_several_writers_are_no_stuck_counter(
    per_step: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ranks or micro-batches writing each step k times: a steady repeat, not a stuck counter."""
    log = tmp_path / "ranks.log"
    log.write_text("".join(f"step {i} loss {3 - 0.001 * i:.4f}\n" for i in range(1, 400) for _ in range(per_step)))
    doc = _analyze(log, capsys)
    assert not _ld008(doc["findings"])
    assert doc["structure"]["rows"] == 399


def test_rule_thresholds_and_the_tracker_agree_with_the_batch_rule() -> None:
    from logdoctor.structure.stuck import MIN_STUCK_RECORDS, StuckTracker, find_stuck

    rng = np.random.default_rng(1)
    steps = np.repeat(np.arange(1, 200), 8)  # 8 writers per step: typical run 8, limit 128
    steps = np.concatenate([steps[:400], np.full(100, 60), steps[400:], np.full(200, 199)])
    lines = np.arange(1, steps.size + 1)
    batch = find_stuck(steps, lines)
    assert [(c.step, c.records) for c in batch] == [(199, 208)]  # 100 at step 60 stays under 128
    tracker = StuckTracker()
    for part in np.array_split(np.arange(steps.size), rng.integers(2, 30)):
        tracker.feed(steps[part], lines[part])
    assert tracker.counters() == batch
    assert find_stuck(np.zeros(MIN_STUCK_RECORDS - 1, dtype=np.int64)) == ()
    assert find_stuck(np.zeros(MIN_STUCK_RECORDS, dtype=np.int64))[0].whole


@pytest.mark.reallogs
def test_no_real_log_has_a_stuck_counter(reallogs_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The null the threshold rests on: no public real log (longest repeat of a step: 2) is flagged."""
    for log in sorted(reallogs_dir.iterdir()):
        if log.suffix in (".tsv", ".md") or log.is_dir():
            continue
        main(["analyze", str(log), "--format", "json"])
        out = capsys.readouterr().out
        if out.strip():
            doc = json.loads(out)
            assert not _ld008(doc.get("findings", [])), log.name


def test_the_tracker_decides_as_the_batch_rule_on_random_logs() -> None:
    """tail's chunked tracker finds the stuck runs ``find_stuck`` finds on the whole log, whatever the
    chunking (random repeat structures, stuck heads and tails)."""
    from logdoctor.structure.stuck import StuckTracker, find_stuck

    rng = np.random.default_rng(5)
    for _ in range(300):
        steps = np.cumsum(rng.random(int(rng.integers(1, 3000))) < rng.random())
        if rng.random() < 0.5:
            steps = np.concatenate([steps, np.full(int(rng.integers(1, 500)), steps[-1])])
        if rng.random() < 0.3:
            steps = np.concatenate([np.full(int(rng.integers(1, 300)), -1), steps])
        lines = np.arange(1, steps.size + 1)
        tracker = StuckTracker()
        for part in np.array_split(np.arange(steps.size), int(rng.integers(1, 20))):
            if part.size:
                tracker.feed(steps[part], lines[part])
        assert sorted(tracker.counters(), key=lambda c: c.first_line) == list(find_stuck(steps, lines))
