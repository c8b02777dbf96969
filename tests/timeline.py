"""Opt-in pytest plugin: when each test ran and on which xdist worker (the suite's time, issue 27).

``python -m pytest -p tests.timeline --timeline FILE`` writes one JSON line per test phase
(worker, nodeid, phase, start, stop, outcome) and, at the end, prints when each worker's first
test started (its start-up and collection), its busy seconds and its idle tail (seconds between
its last test and the run's last): the imbalance that ``--dist loadgroup`` groups can leave,
which per-test durations do not show.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--timeline", metavar="FILE", help="write each test phase's worker and times (JSON lines) to FILE")


class _Timeline:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict[str, Any]] = []
        self.began = time.time()  # the session's start: a worker's first test shows its collection

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        node = getattr(report, "node", None)  # set by xdist on the controller
        worker = node.gateway.id if node is not None else "main"
        self.rows.append({
            "worker": worker, "nodeid": report.nodeid, "phase": report.when,
            "start": report.start, "stop": report.stop, "outcome": report.outcome,
        })

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        self.path.write_text("".join(json.dumps(r) + "\n" for r in self.rows))
        if not self.rows:
            return
        t0 = self.began
        end = max(r["stop"] for r in self.rows)
        terminalreporter.write_line(
            f"timeline: {len(self.rows)} phases, {end - t0:.1f} s from the session's start -> {self.path}"
        )
        for worker in sorted({r["worker"] for r in self.rows}):
            mine = [r for r in self.rows if r["worker"] == worker]
            busy = sum(r["stop"] - r["start"] for r in mine)
            first, last = min(r["start"] for r in mine), max(r["stop"] for r in mine)
            terminalreporter.write_line(
                f"timeline: {worker}: first test at {first - t0:.1f} s, busy {busy:.1f} s, "
                f"last test ended {end - last:.1f} s before the run's last"
            )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--timeline", None)
    if path and not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        config.pluginmanager.register(_Timeline(Path(path)), "timeline-recorder")
