"""tests/timeline.py's per-worker summary (bench/suite_time.py reports the suite's time with it)."""

from __future__ import annotations

from tests.timeline import per_worker


def _row(worker: str, start: float, stop: float, cpu: float | None) -> dict[str, object]:
    return {"worker": worker, "nodeid": "t.py::x", "phase": "call", "start": start, "stop": stop, "cpu": cpu}


def test_each_worker_gets_its_start_busy_cpu_and_idle_tail() -> None:
    rows = [_row("gw0", 108.0, 110.0, 1.5), _row("gw0", 110.0, 111.0, None), _row("gw1", 109.0, 115.0, 6.0)]
    got = per_worker(rows, began=100.0)
    assert got == {
        "gw0": {"first_test_s": 8.0, "busy_s": 3.0, "cpu_s": 1.5, "idle_tail_s": 4.0},
        "gw1": {"first_test_s": 9.0, "busy_s": 6.0, "cpu_s": 6.0, "idle_tail_s": 0.0},
    }
