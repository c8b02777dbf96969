"""Fleet inputs: one address that stands for many runs (an MLflow experiment, a remote prefix or glob),
listed once, on the driver, into the runs' own addresses."""

from __future__ import annotations

from logdoctor.errors import InputError
from logdoctor.ingest.fleet.names import looks_like_log

__all__ = ["is_fleet", "list_fleet", "looks_like_log"]


def list_fleet(name: str) -> list[str] | None:
    """The runs ``name`` stands for when it names a fleet, else None (a file, folder or single run).

    Raises:
        InputError: the listing failed (server or store unreachable, refused, empty, bad filter).
    """
    from logdoctor.ingest.mlflow_store import list_store, may_be_store

    if may_be_store(name):  # an MLflow sqlite store: every run in it, or an experiment's
        return list_store(name)
    if "://" not in name:  # every other fleet address is a URL (see ``is_fleet``)
        return None
    from logdoctor.ingest.fleet.mlflow import experiment_ref, list_experiment
    from logdoctor.ingest.fleet.prefix import is_prefix, list_prefix

    ref = experiment_ref(name)
    if ref is not None:
        runs = list_experiment(ref)
        if not runs:
            raise InputError(f"{name}: the experiment has no run that passes the filters")
        return runs
    if is_prefix(name):
        return list_prefix(name)
    return None


def is_fleet(name: str) -> bool:
    """True for an address that stands for many runs (no listing is done here): an MLflow sqlite
    store (a file whose header says so) or a URL (``mlflow://``, ``http(s)://...#/experiments/``,
    a remote ``scheme://`` prefix or glob), so a local path is answered without loading the HTTP
    and fsspec modules."""
    from logdoctor.ingest.mlflow_store import may_be_store, store_address

    if may_be_store(name):
        addr = store_address(name)
        return addr is not None and not addr.run_id
    if "://" not in name:
        return False
    from logdoctor.ingest.fleet.mlflow import experiment_ref
    from logdoctor.ingest.fleet.prefix import is_prefix

    return experiment_ref(name) is not None or is_prefix(name)
