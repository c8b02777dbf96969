"""A fleet on Ray: one task per run on the Ray instance already running, at an address, or started here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from logdoctor.executors.task import WORKER_ENV, TaskSpec, diagnose, failed, missing_engine, one_thread
from logdoctor.model import RunResult

#: Times Ray runs a task again when its worker process dies.
RETRIES = 3


def ray_task(entry: tuple[str, bool], spec: TaskSpec) -> RunResult:
    """``diagnose`` on a Ray worker: the memory budget is this node's, shared by its cores."""
    import dataclasses
    import os

    one_thread()
    if spec.cfg.max_memory is None:
        from logdoctor.ingest import memory

        share = memory.budget(None) // max(1, os.cpu_count() or 1)
        spec = dataclasses.replace(spec, cfg=dataclasses.replace(spec.cfg, max_memory=max(1, share)))
    return diagnose(entry, spec)


def _ray(address: str | None, workers: int) -> tuple[Any, bool]:
    """(the ray module, whether this call started the instance)."""
    try:
        import ray
    except ImportError:
        raise missing_engine("ray") from None
    if ray.is_initialized():
        return ray, False
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False)
    return ray, True


def run_ray(
    entries: Sequence[tuple[str, bool]], spec: TaskSpec, address: str | None, workers: int, done: Any = None
) -> list[RunResult]:
    """Every entry's RunResult, in input order; each one reported to ``done`` as it finishes."""
    ray, started = _ray(address, workers)
    try:
        remote = ray.remote(ray_task).options(
            num_cpus=1, max_retries=RETRIES, runtime_env={"env_vars": dict(WORKER_ENV)}
        )
        refs = [remote.remote(e, spec) for e in entries]
        index = {r: i for i, r in enumerate(refs)}
        results: list[RunResult | None] = [None] * len(entries)
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=len(pending), timeout=0.2)  # what is done by then
            for ref in ready:
                i = index[ref]
                try:
                    results[i] = ray.get(ref)
                except Exception as err:  # a worker lost past the retries, a bug in one run: its row
                    results[i] = failed(entries[i][0], err)
                if done is not None and (kept := done(i, results[i])) is not None:
                    results[i] = kept
        return [r for r in results if r is not None]
    finally:
        if started:
            ray.shutdown()
