"""--executor on real engines: a Dask LocalCluster of 2 worker processes and a local Ray instance
(``ray.init(num_cpus=2)``) give the same documents as the local executor; a Dask worker killed in
the middle of a fleet is survived, with every run reported."""

from __future__ import annotations

import dataclasses
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.fleet import write_fleet
from logdoctor import pipeline
from logdoctor.errors import ConfigError
from logdoctor.executors import ExecutorSpec, analyze_fleet, parse_executor
from logdoctor.model import RunResult

# one worker holds this module's expensive fixture (--dist loadgroup), not each worker its own
pytestmark = pytest.mark.xdist_group("executors")

RUNS = 12


def test_executor_addresses() -> None:
    assert parse_executor("local") == ExecutorSpec("local")
    assert parse_executor("dask") == ExecutorSpec("dask")
    assert parse_executor("dask://tcp://10.0.0.1:8786") == ExecutorSpec("dask", "tcp://10.0.0.1:8786")
    assert parse_executor("ray://head:10001") == ExecutorSpec("ray", "ray://head:10001")
    for bad in ("spark", "dask://", "local://x", ""):
        with pytest.raises(ConfigError):
            parse_executor(bad)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[RunResult]]:
    """A folder of RUNS runs (some diverging) and a file without steps; its local results."""
    folder = tmp_path_factory.mktemp("fleet")
    write_fleet(folder, RUNS)
    (folder / "notes.txt").write_text("no training steps here\n")
    return folder, analyze_fleet([str(folder)], jobs=1)


def test_local_results_are_the_documents_of_the_single_run_path(fleet: tuple[Path, list[RunResult]]) -> None:
    folder, local = fleet
    logs = [str(folder / f"run_{i:03d}.log") for i in range(RUNS)]
    assert [r.path for r in local] == [str(folder / "notes.txt"), *logs]
    assert local[0].skipped and local[0].status == "unreadable"
    assert [r.exit_code for r in local[1:]] == [o.exit_code for o in pipeline.analyze_paths([str(folder)], jobs=1)[1:]]
    two = analyze_fleet([str(folder)], jobs=2)  # the local process pool: the same documents
    assert [r.document for r in two] == [r.document for r in local]
    # what ``done`` returns is kept instead (the CLI writes each HTML page and drops it)
    pages: list[str] = []

    def write(index: int, result: RunResult) -> RunResult:
        pages.append(result.html or "")
        return dataclasses.replace(result, html=None)

    dropped = analyze_fleet([str(folder)], jobs=2, html=True, done=write)
    assert all(r.html is None for r in dropped) and sum("<svg" in p for p in pages) == RUNS


@pytest.fixture(scope="module")
def dask_address() -> Iterator[str]:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, env={"POLARS_MAX_THREADS": "1"}
    ) as cluster:
        yield cluster.scheduler_address


def test_dask_gives_the_local_documents(fleet: tuple[Path, list[RunResult]], dask_address: str) -> None:
    folder, local = fleet
    seen: list[int] = []
    got = analyze_fleet([str(folder)], executor=f"dask://{dask_address}", done=lambda i, r: seen.append(i))
    assert [r.document for r in got] == [r.document for r in local]
    assert sorted(seen) == list(range(len(local)))


def test_a_dask_worker_killed_mid_fleet_is_survived(tmp_path: Path, dask_address: str) -> None:
    from distributed import Client

    write_fleet(tmp_path, 3 * RUNS)
    local = analyze_fleet([str(tmp_path)], jobs=1)
    with Client(dask_address) as client:
        pids = client.run(os.getpid)
    victim = next(iter(pids.values()))
    after_kill: list[int] = []

    def kill_once(index: int, result: RunResult) -> None:
        if not after_kill:  # at the first result, while the other runs are queued or running
            os.kill(victim, signal.SIGKILL)  # a worker process of the cluster this module started
        after_kill.append(index)

    got = analyze_fleet([str(tmp_path)], executor=f"dask://{dask_address}", done=kill_once)
    assert len(after_kill) == len(local) and len(after_kill) > 1  # runs finished after the kill too
    with pytest.raises(ProcessLookupError):
        os.kill(victim, 0)
    assert [r.document for r in got] == [r.document for r in local]


@pytest.fixture(scope="module")
def ray_started(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    home = tmp_path_factory.mktemp("rayhome")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))  # ray keeps its token under ~/.ray
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=str(tmp_path_factory.mktemp("r")))
        try:
            yield
        finally:
            ray.shutdown()


@pytest.mark.usefixtures("ray_started")
def test_ray_gives_the_local_documents(fleet: tuple[Path, list[RunResult]]) -> None:
    folder, local = fleet
    got = analyze_fleet([str(folder)], executor="ray")
    assert [r.document for r in got] == [r.document for r in local]
