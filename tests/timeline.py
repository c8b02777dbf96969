"""Opt-in pytest plugin: when each test ran and on which xdist worker (the suite's time, issue 27).

``python -m pytest -p tests.timeline --timeline FILE`` writes one JSON line per test phase
(worker, nodeid, phase, start, stop, CPU seconds of the worker and the processes it waited for,
outcome) and, at the end, prints when each worker's first test started (its start-up and
collection), its busy and CPU seconds and its idle tail (seconds between its last test and the
run's last): the imbalance that ``--dist loadgroup`` groups can leave, and the tests that wait
rather than work, which per-test durations do not show.
"""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--timeline", metavar="FILE", help="write each test phase's worker and times (JSON lines) to FILE")


def _cpu() -> float:
    """User + system CPU seconds of this process and of the children it has waited for."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class _CpuMeter:
    """On each process that runs tests: the CPU of each phase, carried to the controller in the
    report's user_properties (copied into the report right after the phase)."""

    def _measure(self, item: pytest.Item, phase: str) -> Generator[None, None, None]:
        t0 = _cpu()
        yield
        item.user_properties.append((f"cpu_{phase}", _cpu() - t0))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._measure(item, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._measure(item, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._measure(item, "teardown")


class _Timeline:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict[str, Any]] = []
        self.began = time.time()  # the session's start: a worker's first test shows its collection

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        node = getattr(report, "node", None)  # set by xdist on the controller
        worker = node.gateway.id if node is not None else "main"
        cpu = dict(report.user_properties).get(f"cpu_{report.when}")
        self.rows.append(
            {
                "worker": worker,
                "nodeid": report.nodeid,
                "phase": report.when,
                "start": report.start,
                "stop": report.stop,
                "cpu": cpu,
                "outcome": report.outcome,
            }
        )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        self.path.write_text("".join(json.dumps(r) + "\n" for r in self.rows))
        if not self.rows:
            return
        end = max(r["stop"] for r in self.rows)
        terminalreporter.write_line(
            f"timeline: {len(self.rows)} phases, {end - self.began:.1f} s from the session's start -> {self.path}"
        )
        for worker, w in per_worker(self.rows, self.began).items():
            terminalreporter.write_line(
                f"timeline: {worker}: first test at {w['first_test_s']} s, busy {w['busy_s']} s "
                f"({w['cpu_s']} CPU-s), last test ended {w['idle_tail_s']} s before the run's last"
            )


def per_worker(rows: list[dict[str, Any]], began: float) -> dict[str, dict[str, float]]:
    """For each worker: when its first test started (seconds after ``began``, the session's start),
    its busy wall and CPU seconds, and its idle tail (seconds between its last test and the run's)."""
    end = max(r["stop"] for r in rows)
    out = {}
    for worker in sorted({r["worker"] for r in rows}):
        mine = [r for r in rows if r["worker"] == worker]
        out[worker] = {
            "first_test_s": round(min(r["start"] for r in mine) - began, 1),
            "busy_s": round(sum(r["stop"] - r["start"] for r in mine), 1),
            "cpu_s": round(sum(r["cpu"] or 0.0 for r in mine), 1),
            "idle_tail_s": round(end - max(r["stop"] for r in mine), 1),
        }
    return out


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--timeline", None)
    if not path:
        return
    config.pluginmanager.register(_CpuMeter(), "timeline-cpu")
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        config.pluginmanager.register(_Timeline(Path(path)), "timeline-recorder")
