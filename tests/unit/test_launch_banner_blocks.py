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


def test_a_dataloader_workers_reraised_traceback_is_the_same_failure() -> None:
    """torch/_utils.py ExceptionWrapper.reraise: ``Caught ValueError in DataLoader worker process 0.``
    then the worker's ``Original Traceback``: one failure, one event."""
    text = [
        "Traceback (most recent call last):",
        '  File "train_loop.py", line 155, in train',
        "ValueError: Caught ValueError in DataLoader worker process 0.",
        "Original Traceback (most recent call last):",
        '  File "worker.py", line 351, in _worker_loop',
        "ValueError: too many dimensions 'Boxes'",
    ]
    lines = pl.DataFrame({"line_no": list(range(1, len(text) + 1)), "line": text})
    (e,) = scan_events(lines)
    assert e.kind == "exception" and e.line == 6 and e.block_line == 1


def _launch(config_lines: int, crash: bool) -> list[str]:
    banner = ["detectron2 INFO: Rank of current process: 0. World size: 1", "detectron2 INFO: Environment info:"]
    config = [f"  OPTION_{k}: value_{k % 7}_{'x' * (k % 5)}" for k in range(config_lines)]
    tail = ["Traceback (most recent call last):", "ValueError: too many dimensions 'Boxes'"] if crash else []
    return [*banner, "sys.platform                     linux", *config, *tail]


def test_a_relaunch_after_a_long_config_dump_is_seen() -> None:
    """The launch banner is more than the window of lines before the crash (a long config dump):
    the start-up lines at the process's start, printed again after the failure, say it started again."""
    text = [*_launch(900, crash=True), *_launch(900, crash=False)]
    lines = pl.DataFrame({"line_no": list(range(1, len(text) + 1)), "line": text})
    (e,) = scan_events(lines)
    assert e.relaunched
    alone = [*_launch(900, crash=True), *[f"evaluating batch {k}" for k in range(50)]]
    (e,) = scan_events(pl.DataFrame({"line_no": list(range(1, len(alone) + 1)), "line": alone}))
    assert not e.relaunched
