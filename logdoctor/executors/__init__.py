"""Where a fleet's runs are analysed: this machine's processes, a Dask cluster or a Ray cluster.

``--executor local`` (default), ``dask`` / ``ray`` (a local cluster started for the command), or an
address: ``dask://tcp://scheduler:8786``, ``ray://head:10001``. Each task analyses one run and
returns its RunResult (the JSON document, ~3 kB, never the step table); results come back as they
finish (``done`` is called with each) and are returned in input order. Scheduling, retries and
worker loss are the engine's; a run whose task still fails is an error row. The engines are
optional extras (``dask``, ``ray``), imported only here, only when asked.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from logdoctor.config import AnalysisConfig
from logdoctor.errors import ConfigError
from logdoctor.executors.task import TaskSpec
from logdoctor.exitcodes import ExitCode
from logdoctor.model import RunResult

KINDS = ("local", "dask", "ray")
#: Called on the driver with ``(index, result)`` as each run finishes; a result it returns is kept instead.
Done = Callable[[int, RunResult], RunResult | None]


@dataclass(frozen=True, slots=True)
class ExecutorSpec:
    """An engine and, for a cluster already running, its address (None: start one here)."""

    kind: str
    address: str | None = None


def parse_executor(text: str) -> ExecutorSpec:
    """``local``, ``dask``, ``ray``, ``dask://ADDRESS`` or ``ray://HOST:PORT``.

    Raises:
        ConfigError: anything else.
    """
    kind, sep, rest = text.partition("://")
    if kind in KINDS and not sep:
        return ExecutorSpec(kind)
    if kind == "dask" and rest:
        return ExecutorSpec("dask", rest)
    if kind == "ray" and rest:
        return ExecutorSpec("ray", text)  # ray.init takes the ray:// address whole
    raise ConfigError(f"--executor: expected local, dask, ray, dask://ADDRESS or ray://HOST:PORT, got {text!r}")


def run_fleet(
    entries: Sequence[tuple[str, bool]], spec: TaskSpec, executor: ExecutorSpec, workers: int, done: Done | None = None
) -> list[RunResult]:
    """Every entry's RunResult, in input order, analysed where ``executor`` says.

    Args:
        entries: ``(address, found in a folder)`` of each run, as listed on the driver.
        spec: what each task is asked.
        executor: the engine.
        workers: processes of a local pool or of a local cluster started here (ignored with an address).
        done: called on the driver with ``(index, result)`` as each run finishes.
    """
    if executor.kind == "dask":
        from logdoctor.executors.daskrun import run_dask

        return run_dask(entries, spec, executor.address, workers, done)
    if executor.kind == "ray":
        from logdoctor.executors.rayrun import run_ray

        return run_ray(entries, spec, executor.address, workers, done)
    from logdoctor.executors.task import diagnose
    from logdoctor.parallel import fan_out

    return fan_out(diagnose, list(entries), spec, workers, done)


def analyze_fleet(
    paths: Sequence[str],
    cfg: AnalysisConfig | None = None,
    jobs: int | None = None,
    executor: str = "local",
    html: bool = False,
    done: Done | None = None,
) -> list[RunResult]:
    """Analyse a fleet: the inputs are listed once, here (files, folders, MLflow experiments, remote
    prefixes), and each run is one task of ``executor`` (``local``, ``dask``, ``ray`` or an address,
    see ``logdoctor.executors``), whose result is the run's JSON document, never its step table.

    Results keep the order of the listed runs; a run that fails is an error result.

    Args:
        jobs: local worker processes, or the workers of a local cluster started here (default: the cores).
        html: also render each run's own HTML report on its worker.
        done: called with ``(index, result)`` as each run finishes.
    """
    from logdoctor import pipeline

    spec = parse_executor(executor)
    cfg = cfg or AnalysisConfig()
    entries = list(pipeline.expand_entries(paths).items())
    if spec.kind != "local" and "-" in dict(entries):
        raise ConfigError(f"--executor {spec.kind}: standard input (-) cannot be sent to an engine's workers")
    if spec.kind == "local":
        workers = 1 if "-" in dict(entries) else min(jobs or pipeline.auto_jobs([p for p, _ in entries]), len(entries))
        cfg = pipeline.worker_config(cfg, workers) if workers > 1 else cfg
    else:  # a local cluster started here: one worker per core unless told
        workers = min(jobs or os.cpu_count() or 1, max(1, len(entries)))
    results = run_fleet(entries, TaskSpec(cfg, html), spec, max(1, workers), done)
    if results and all(r.skipped for r in results):  # nothing was analysed: each is an input error again
        return [dataclasses.replace(r, skipped=False, exit_code=ExitCode.BAD_INPUT) for r in results]
    return results
