"""A fleet on Dask: one task per run on a cluster at an address, or on a LocalCluster started here."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from logdoctor.executors.task import WORKER_ENV, TaskSpec, diagnose, failed, missing_engine, one_thread
from logdoctor.model import RunResult


def dask_task(entry: tuple[str, bool], spec: TaskSpec) -> RunResult:
    """``diagnose`` on a Dask worker: the memory budget is the worker's own limit unless one was given."""
    import dataclasses

    one_thread()
    if spec.cfg.max_memory is None:
        from distributed import get_worker

        limit = int(get_worker().memory_manager.memory_limit or 0)
        if limit:
            spec = dataclasses.replace(spec, cfg=dataclasses.replace(spec.cfg, max_memory=limit))
    return diagnose(entry, spec)


def _client(address: str | None, workers: int) -> tuple[Any, Any]:
    """(client, cluster started here or None)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise missing_engine("dask") from None
    if address:
        client = Client(address)
        client.run(one_thread)  # workers that have not loaded polars yet keep it to one thread
        return client, None
    cluster = LocalCluster(
        n_workers=max(1, workers),
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        env=dict(WORKER_ENV),
        memory_limit=_memory_per_worker(workers),
    )
    return Client(cluster), cluster


def _memory_per_worker(workers: int) -> int:
    from logdoctor.ingest import memory

    return max(1, memory.budget(None) // max(1, workers))


def run_dask(
    entries: Sequence[tuple[str, bool]], spec: TaskSpec, address: str | None, workers: int, done: Any = None
) -> list[RunResult]:
    """Every entry's RunResult, in input order; each one reported to ``done`` as it finishes."""
    from distributed import as_completed

    client, cluster = _client(address, workers)
    token = uuid.uuid4().hex[:8]
    try:
        futures = [
            client.submit(dask_task, e, spec, key=f"logdoctor-{token}-{i}", pure=False) for i, e in enumerate(entries)
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        results: list[RunResult | None] = [None] * len(entries)
        for fut in as_completed(futures):
            i = index[fut.key]
            try:
                results[i] = fut.result()
            except Exception as err:  # KilledWorker past the retries, a bug in one run: its row
                results[i] = failed(entries[i][0], err)
            if done is not None and (kept := done(i, results[i])) is not None:
                results[i] = kept
            fut.release()
        return [r for r in results if r is not None]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
