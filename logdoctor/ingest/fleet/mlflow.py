"""Every run of an MLflow experiment (by id or by name, filtered by status or start date), listed once."""

# ``mlflow://HOST:PORT/experiments/3`` or ``.../experiments/my-sweep`` (a name), and the UI's
# ``http://HOST:PORT/#/experiments/3``; filters as a query: ``?status=FINISHED,FAILED&after=2026-11-01
# &before=2026-12-01&filter=params.lr = '0.1'`` (``filter``: MLflow's own search syntax, and-ed).
# ``runs/search`` (paginated, oldest first) lists them; each run becomes its UI address, which the
# single-run reader (ingest/mlflow_server.py) reads on whichever worker gets it.

from __future__ import annotations

import datetime as dt
import re
import urllib.parse
from dataclasses import dataclass

from logdoctor.errors import InputError
from logdoctor.ingest.mlflow_server import RunRef, get_json, post_json

_SCHEME = re.compile(
    r"^mlflow://(?P<host>[^/?#]+)(?P<prefix>(?:/[^/?#]+)*?)/experiments/(?P<exp>[^/?#]+)/?(?:\?(?P<query>.*))?$"
)
_UI = re.compile(r"^(?P<base>https?://[^#]+?)/?#/experiments/(?P<exp>[^/?#]+)/?(?:\?(?P<query>.*))?$")
FILTERS = ("status", "after", "before", "filter")
STATUSES = ("RUNNING", "SCHEDULED", "FINISHED", "FAILED", "KILLED")
PAGE = 1000
_MAX_PAGES = 1000


@dataclass(frozen=True, slots=True)
class ExperimentRef:
    """An experiment on a tracking server and the filters its runs must pass.

    Attributes:
        base: the server's base URL.
        experiment: the experiment id (digits) or name.
        status: run statuses kept (empty: all).
        after / before: start time bounds, ms since the epoch (inclusive / exclusive).
        filter: an MLflow search filter, and-ed with the others.
    """

    base: str
    experiment: str
    status: tuple[str, ...] = ()
    after: int | None = None
    before: int | None = None
    filter: str = ""

    @property
    def server(self) -> RunRef:
        return RunRef(self.base, f"of experiment {self.experiment}")

    def search_filter(self) -> str:
        """The MLflow search filter that says all of the filters."""
        parts = [self.filter] if self.filter else []
        if len(self.status) == 1:  # MLflow's filter has no OR (nor IN for status): several are kept here
            parts.append(f"attributes.status = '{self.status[0]}'")
        if self.after is not None:
            parts.append(f"attributes.start_time >= {self.after}")
        if self.before is not None:
            parts.append(f"attributes.start_time < {self.before}")
        return " AND ".join(parts)


def _millis(value: str, key: str, name: str) -> int:
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise InputError(f"{name}: {key}={value!r} is not a date (YYYY-MM-DD[THH:MM])") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp() * 1000)


def experiment_ref(name: str) -> ExperimentRef | None:
    """The experiment an address names (with its filters), or None when ``name`` is not one.

    Raises:
        InputError: a filter is unknown or its value is not valid.
    """
    m = _SCHEME.match(name)
    if m:
        scheme = "https" if m["host"].endswith(":443") else "http"
        base = f"{scheme}://{m['host']}{m['prefix']}"
    elif m := _UI.match(name):
        base = m["base"].rstrip("/")
    else:
        return None
    return selected(base, urllib.parse.unquote(m["exp"]), m["query"] or "", name)


def selected(base: str, experiment: str, query: str, name: str) -> ExperimentRef:
    """The experiment of ``base`` that ``experiment`` (id or name) names, with the filters of
    ``query`` (``status``, ``after``, ``before``, ``filter``): a tracking server's or a local
    store's (ingest/mlflow_store.py).

    Raises:
        InputError: a filter is unknown or its value is not valid.
    """
    query_ = urllib.parse.parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(query_) - set(FILTERS))
    if unknown:
        raise InputError(f"{name}: unknown filter {unknown[0]!r} (known: {', '.join(FILTERS)})")
    status = tuple(s.strip().upper() for v in query_.get("status", []) for s in v.split(",") if s.strip())
    if bad := [s for s in status if s not in STATUSES]:
        raise InputError(f"{name}: status={bad[0]} is not a run status ({', '.join(STATUSES)})")
    after = _millis(query_["after"][-1], "after", name) if "after" in query_ else None
    before = _millis(query_["before"][-1], "before", name) if "before" in query_ else None
    return ExperimentRef(
        base, experiment, status, after, before, " AND ".join(f"({f})" for f in query_.get("filter", []) if f.strip())
    )


def experiment_id(ref: ExperimentRef) -> str:
    """The experiment's id: as given when digits, else looked up by name."""
    if ref.experiment.isdigit():
        return ref.experiment
    try:
        doc = get_json(ref.server, "experiments/get-by-name", {"experiment_name": ref.experiment})
    except InputError as err:
        if "no such run" in str(err):
            raise InputError(f"{ref.base}: no experiment named {ref.experiment!r} on this MLflow server") from None
        raise
    exp = doc.get("experiment", {})
    if not isinstance(exp, dict) or "experiment_id" not in exp:
        raise InputError(f"{ref.base}: no experiment named {ref.experiment!r} on this MLflow server")
    return str(exp["experiment_id"])


def list_experiment(ref: ExperimentRef) -> list[str]:
    """The address of every run of the experiment that passes the filters, oldest first.

    Raises:
        InputError: the server cannot be reached, refuses, or has no such experiment.
    """
    exp = experiment_id(ref)
    body: dict[str, object] = {
        "experiment_ids": [exp],
        "max_results": PAGE,
        "run_view_type": "ACTIVE_ONLY",
        "order_by": ["attributes.start_time ASC", "attributes.run_id ASC"],
    }
    if flt := ref.search_filter():
        body["filter"] = flt
    out: list[str] = []
    for _ in range(_MAX_PAGES):
        doc = post_json(ref.server, "runs/search", body)
        for run in doc.get("runs", []):
            info = run.get("info", {}) if isinstance(run, dict) else {}
            if ref.status and info.get("status") not in ref.status:
                continue
            if run_id := info.get("run_id") or info.get("run_uuid"):
                out.append(f"{ref.base}/#/experiments/{exp}/runs/{run_id}")
        if not (token := doc.get("next_page_token")):
            break
        body["page_token"] = token
    return out
