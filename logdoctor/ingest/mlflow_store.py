"""MLflow's local sqlite store (``mlflow.db``: what MLflow 3 writes by default), read through
MLflow's own client: every run in it is a fleet, an experiment with the tracking server's filters
(ingest/fleet/mlflow.py) selects some, and each run is read on its own.

Addresses: the store (``mlflow.db``, or ``sqlite:///mlflow.db`` and ``sqlite:////abs/mlflow.db``),
optionally followed by ``#/experiments/<id or name>[?status=..&after=..&before=..&filter=..]``
(one experiment), or ``#/experiments/<id>/runs/<run_id>`` (one run, as the listing writes it).
A bare path is a store when the file starts with the SQLite header and holds MLflow's tables.
The store is opened read-only to list its tables; MLflow's client reads the runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logdoctor.errors import InputError, ParseError
from logdoctor.ingest.aliases import FieldMap

if TYPE_CHECKING:
    from logdoctor.ingest.parsers.base import ParseResult

SQLITE_MAGIC = b"SQLite format 3\x00"
#: The tables every MLflow tracking store has (its schema since MLflow 1).
MLFLOW_TABLES = frozenset({"experiments", "runs", "metrics", "params"})
FORMAT = "mlflow_sqlite"
_FRAGMENT = re.compile(r"^/experiments/(?P<exp>[^/?]+)(?:/runs/(?P<run>[0-9A-Za-z_-]+))?/?(?:\?(?P<query>.*))?$")
PAGE = 1000
_MAX_PAGES = 1000


@dataclass(frozen=True, slots=True)
class StoreAddress:
    """A store and what of it an address names: every run, one experiment (with filters), one run."""

    path: Path
    experiment: str = ""
    run_id: str = ""
    query: str = ""

    @property
    def uri(self) -> str:
        return f"sqlite:///{self.path.resolve()}"

    def run_address(self, experiment: str, run_id: str) -> str:
        return f"{self.uri}#/experiments/{experiment}/runs/{run_id}"


def is_mlflow_sqlite(path: Path) -> bool:
    """True for a SQLite file holding MLflow's tables (the header is read first: a log costs 16 bytes)."""
    import sqlite3

    try:
        with path.open("rb") as fh:
            if fh.read(16) != SQLITE_MAGIC:
                return False
        with contextlib.closing(sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)) as db:
            names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except (OSError, sqlite3.Error):
        return False
    return names >= MLFLOW_TABLES


def store_address(name: str) -> StoreAddress | None:
    """What ``name`` names in an MLflow sqlite store, or None when it names no store.

    Raises:
        InputError: a ``sqlite://`` address whose file is missing or not an MLflow store, or a
            fragment that names neither an experiment nor a run.
    """
    base, _, fragment = name.partition("#")
    uri = base.startswith("sqlite://")
    if uri:
        path = Path(base.removeprefix("sqlite:///")) if base.startswith("sqlite:///") else None
        if path is None or not path.is_file():
            raise InputError(f"{name}: no such sqlite file (a store is sqlite:///relative.db or sqlite:////abs.db)")
        if not is_mlflow_sqlite(path):
            raise InputError(f"{name}: not an MLflow store (no experiments, runs and metrics tables)")
    else:
        path = Path(base)
        if not base or not path.is_file() or not is_mlflow_sqlite(path):
            return None
    if not fragment:
        return StoreAddress(path)
    m = _FRAGMENT.match(fragment)
    if m is None:
        raise InputError(f"{name}: expected #/experiments/<id or name>[?filters] or #/experiments/<id>/runs/<run id>")
    import urllib.parse

    return StoreAddress(path, urllib.parse.unquote(m["exp"]), m["run"] or "", m["query"] or "")


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """MLflow and alembic say INFO lines on stderr when they open a store: not the user's concern."""
    loggers = [logging.getLogger(n) for n in ("alembic", "mlflow")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _client(addr: StoreAddress, name: str) -> Any:
    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise InputError(f"{name}: an MLflow sqlite store is read through mlflow: pip install mlflow") from None
    with _quiet():
        try:
            return MlflowClient(tracking_uri=addr.uri)
        except Exception as err:  # mlflow raises its own (a schema it cannot read): one line
            raise InputError(f"{name}: MLflow cannot open the store: {str(err).splitlines()[0]}") from None


def _experiment_ids(client: Any, addr: StoreAddress, name: str) -> list[str]:
    from mlflow.entities import ViewType

    if not addr.experiment:
        return [e.experiment_id for e in client.search_experiments(view_type=ViewType.ACTIVE_ONLY)]
    exp = client.get_experiment_by_name(addr.experiment)
    if exp is None and addr.experiment.isdigit():
        with contextlib.suppress(Exception):
            exp = client.get_experiment(addr.experiment)
    if exp is None:
        raise InputError(f"{name}: no experiment named {addr.experiment!r} in this MLflow store")
    return [exp.experiment_id]


def list_store(name: str) -> list[str] | None:
    """The address of every run that ``name`` stands for (a store, or one experiment of it, with the
    tracking server's filters), oldest first; None when ``name`` is no store or names one run.

    Raises:
        InputError: mlflow missing, the store unreadable, no such experiment, a bad filter, no run.
    """
    addr = store_address(name)
    if addr is None or addr.run_id:
        return None
    from logdoctor.ingest.fleet.mlflow import selected

    ref = selected(addr.uri, addr.experiment, addr.query, name)
    client = _client(addr, name)
    from mlflow.entities import ViewType

    out: list[str] = []
    with _quiet():
        ids = _experiment_ids(client, addr, name)
        token = None
        for _ in range(_MAX_PAGES):
            page = client.search_runs(
                ids,
                filter_string=ref.search_filter(),
                run_view_type=ViewType.ACTIVE_ONLY,
                max_results=PAGE,
                order_by=["attributes.start_time ASC", "attributes.run_id ASC"],
                page_token=token,
            )
            out += [
                addr.run_address(r.info.experiment_id, r.info.run_id)
                for r in page
                if not ref.status or r.info.status in ref.status
            ]
            token = page.token
            if not token:
                break
    if not out:
        raise InputError(f"{name}: the store has no run that passes the filters")
    return out


def read_store_run(addr: StoreAddress, fields: FieldMap, name: str) -> ParseResult:
    """Every metric history, the params and the status of the run ``addr`` names.

    Raises:
        InputError: mlflow missing, the store unreadable, no such run.
        ParseError: the run logged no metric.
    """
    from logdoctor.ingest.parsers.mlflow_server import from_histories

    client = _client(addr, name)
    with _quiet():
        try:
            run = client.get_run(addr.run_id)
        except Exception:
            raise InputError(f"{name}: no such run in this MLflow store") from None
        keys = sorted(run.data.metrics)
        if not keys:
            raise ParseError(f"{name}: the run has no metrics")
        histories = {
            k: [
                {"step": m.step, "value": m.value, "timestamp": m.timestamp}
                for m in client.get_metric_history(addr.run_id, k)
            ]
            for k in keys
        }
    return from_histories(
        histories,
        dict(run.data.params),
        str(run.info.status),
        fields,
        name,
        f"MLflow store {addr.path.name}",
        "MLflow's client",
    )


def may_be_store(name: str) -> bool:
    """A cheap first look: ``name`` is a ``sqlite://`` address or names an existing file (whose
    header ``store_address`` then reads)."""
    base = name.partition("#")[0]
    return base.startswith("sqlite://") or ("://" not in base and os.path.isfile(base))
