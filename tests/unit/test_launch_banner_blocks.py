"""A launch's banner between two failure lines: each failure is its own launch's (a process dies once).

keithito Tacotron's util/infolog.py prints ``Starting new training run`` when a process starts;
TensorFlow's Saver.restore raises ``The passed save_path is not a valid checkpoint``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from logdoctor import pipeline
from logdoctor.ingest.parsers.events import scan_events
from logdoctor.model import Report

BANNER = ["", "-" * 65, "Starting new training run", "-" * 65]


def test_a_run_header_between_two_failure_lines_splits_the_block() -> None:
    lines = pl.DataFrame(
        {"line_no": [5, 12], "line": ["ValueError: bad shapes", "The passed save_path is not a valid checkpoint: m-3"]}
    )
    assert [e.kind for e in scan_events(lines, np.array([], dtype=np.int64), (8,))] == ["exception", "restore_failed"]
    assert [e.kind for e in scan_events(lines)] == ["restore_failed"]  # one block without the header


def _steps(first: int, last: int) -> list[str]:
    return [
        f"[2019-01-22 08:38:45.894]  Step {k}   [0.780 sec/step, loss={1 - k / 90000:.5f}]"
        for k in range(first, last + 1, 50)
    ]


def _report(tmp_path: Path, lines: list[str]) -> Report:
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    return pipeline.analyze(pipeline.load(str(path)))


def test_a_crash_then_a_launch_that_found_no_checkpoint_are_two_failures(tmp_path: Path) -> None:
    crash = "[2019-01-22 08:38:54.241]  Exiting due to exception: Found Inf or NaN global norm."
    tf = "InvalidArgumentError (see above for traceback): Found Inf or NaN global norm. : Tensor had Inf values"
    lost = "[2019-01-22 10:54:40.564]  Exiting due to exception: The passed save_path is not a valid checkpoint: m-3000"
    resume = "[2019-01-22 10:59:58.000]  Resuming from checkpoint: ./logs-tacotron/model.ckpt-3000"
    lines = [*BANNER, *_steps(50, 3100), crash, tf, *BANNER, "  Hyperparameters:", lost, *BANNER, resume]
    report = _report(tmp_path, [*lines, *_steps(3050, 5000)])
    codes = {f.code: f for f in report.findings}
    assert "InvalidArgumentError" in codes["LD014"].message  # the first launch crashed and was relaunched
    assert "not a valid checkpoint" in codes["LD015"].message  # the second found no checkpoint


def test_banners_of_one_healthy_launch_raise_nothing(tmp_path: Path) -> None:
    report = _report(tmp_path, [*BANNER, *_steps(50, 5000)])
    assert report.status == "ok"
    assert not [f for f in report.findings if f.code in ("LD010", "LD014", "LD015", "LD018")]
