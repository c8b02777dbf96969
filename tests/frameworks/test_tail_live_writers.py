"""``logdoctor tail --exit-on error`` on every live source, written live by its own writer: the HF
Trainer saving its state, Lightning's CSVLogger, the TensorBoard SummaryWriter, and by hand
appended text, JSON lines, a W&B transaction log and a document replaced whole (issue 42.1).
A NaN stops each at once (exit 1, LD001); a healthy run is never stopped."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.frameworks.livewriters import KINDS, REAL, follow

#: Seconds from the NaN write to tail's exit that no source may exceed here, on a loaded
#: 2-core machine (bench/bench_tail.py sources gives the median: under 1 s on each).
LATENCY = 5.0


def _needs(kind: str) -> None:
    if kind in REAL:
        for module in ("torch", "transformers", "lightning", "tensorboard"):
            if importlib.util.find_spec(module) is None:
                pytest.skip(f"needs the 'frameworks' extra ({module})")


@pytest.mark.parametrize("kind", KINDS)
def test_a_nan_written_live_stops_tail_at_once(kind: str, tmp_path: Path) -> None:
    _needs(kind)
    o = follow(kind, tmp_path, nan=True)
    assert (o.code, o.reason) == (1, "exit-on"), o.events[-3:]
    assert [f["code"] for f in o.findings("error")] == ["LD001"]
    assert o.latency is not None and 0 < o.latency < LATENCY


@pytest.mark.parametrize("kind", KINDS)
def test_a_healthy_run_written_live_is_never_stopped(kind: str, tmp_path: Path) -> None:
    _needs(kind)
    o = follow(kind, tmp_path, nan=False, steps=48 if kind in REAL else 80, idle=3.0)
    assert (o.code, o.reason) == (0, "idle-timeout")
    stop = next(e for e in o.events if e["event"] == "stop")
    assert o.findings("error") == [] and stop["sources"][0]["rows"] >= 40  # read as it was written
