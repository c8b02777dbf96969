"""Read a run from an MLflow tracking server over its REST API (no mlflow package needed)."""

# ``http://host:5000/#/experiments/0/runs/<run_id>`` (the UI's address, which ``mlflow`` prints as
# "View run at ...") and ``mlflow://host:port/<run_id>`` name a run. ``runs/get`` gives the metric
# keys and params; ``metrics/get-history`` (paginated) gives every value of every metric.

from __future__ import annotations

import base64
import json
import os
import re
import urllib.error
import urllib.parse
from dataclasses import dataclass
from typing import Any

from logdoctor.errors import InputError
from logdoctor.ingest import limits

_UI = re.compile(r"^(?P<base>https?://[^#]+?)/?#/experiments/[^/]+/runs/(?P<run>[0-9A-Za-z_-]+)")
_SCHEME = re.compile(r"^mlflow://(?P<host>[^/]+)(?P<prefix>(?:/[^/]+)*?)/(?P<run>[0-9A-Za-z_-]+)/?$")
PAGE = 25000
TIMEOUT_S = 30.0
_MAX_PAGES = 10000


@dataclass(frozen=True, slots=True)
class RunRef:
    """A run on a tracking server: the server's base URL and the run id."""

    base: str
    run_id: str

    @property
    def display(self) -> str:
        return f"{self.base} run {self.run_id}"


def run_ref(name: str) -> RunRef | None:
    """The run a tracking-server address names, or None when ``name`` is not one."""
    m = _UI.match(name)
    if m:
        return RunRef(m["base"].rstrip("/"), m["run"])
    m = _SCHEME.match(name)
    if m and not (m["prefix"].endswith("/experiments") or "/experiments/" in m["prefix"]):  # an experiment
        scheme = "https" if m["host"].endswith(":443") else "http"
        return RunRef(f"{scheme}://{m['host']}{m['prefix']}", m["run"])
    return None


def _split_userinfo(base: str) -> tuple[str, tuple[str, str] | None]:
    """``http://user:password@host/p`` -> (``http://host/p``, (user, password)); no userinfo: None."""
    parts = urllib.parse.urlsplit(base)
    if "@" not in parts.netloc:
        return base, None
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, _, password = userinfo.partition(":")
    plain = urllib.parse.urlunsplit(parts._replace(netloc=host))
    return plain, (urllib.parse.unquote(user), urllib.parse.unquote(password))


def _auth_header(userinfo: tuple[str, str] | None = None) -> dict[str, str]:
    """Credentials from the environment (as the mlflow client reads them), else the address's
    ``user:password@`` as basic authentication."""
    token = os.environ.get("MLFLOW_TRACKING_TOKEN")
    if token:
        return {"Authorization": f"Bearer {token}"}
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if not (user and password) and userinfo is not None:
        user, password = userinfo
    if user and password:
        basic = base64.b64encode(f"{user}:{password}".encode()).decode()
        return {"Authorization": f"Basic {basic}"}
    return {}


def _error(ref: RunRef, err: urllib.error.HTTPError) -> InputError:
    if err.code in (401, 403):
        return InputError(
            f"{ref.display}: the server refused access (HTTP {err.code}); set MLFLOW_TRACKING_TOKEN "
            "or MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD"
        )
    try:
        body = json.loads(err.read() or b"{}")
    except ValueError:
        body = {}
    code = body.get("error_code", "") if isinstance(body, dict) else ""
    if err.code == 404 or code in ("RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE"):
        return InputError(f"{ref.display}: no such run on this MLflow server (HTTP {err.code} {code})".rstrip())
    return InputError(f"{ref.display}: the MLflow server answered HTTP {err.code} {err.reason}")


#: HTTP statuses that say "try again later" (rate limit, gateway, unavailable), not "no".
TRANSIENT_HTTP = frozenset({429, 502, 503, 504})


#: Connection failures that a restarting or overloaded server gives (refused while it restarts,
#: reset or timed out under load): worth retrying, unlike a name that does not resolve.
TRANSIENT_OS = (TimeoutError, ConnectionRefusedError, ConnectionResetError, ConnectionAbortedError)


class TransientServerError(InputError):
    """The server failed in a way that may pass (HTTP 503, a refused or reset connection, a
    timeout, an answer cut short): a follower retries; a one-shot read reports it like any input
    error."""


def _transient(ref: RunRef, err: object) -> TransientServerError:
    if isinstance(err, ConnectionRefusedError):
        return TransientServerError(f"{ref.display}: cannot reach the MLflow server ({err})")
    return TransientServerError(f"{ref.display}: the MLflow server did not answer ({err})")


def get_json(ref: RunRef, endpoint: str, query: dict[str, str]) -> dict[str, Any]:
    """GET ``/api/2.0/mlflow/<endpoint>?query`` as JSON; every failure is one InputError line."""
    return call_json(ref, f"{endpoint}?{urllib.parse.urlencode(query)}")


def post_json(ref: RunRef, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST ``body`` to ``/api/2.0/mlflow/<endpoint>`` (``runs/search``); errors as ``get_json``."""
    return call_json(ref, endpoint, json.dumps(body).encode())


def call_json(ref: RunRef, endpoint: str, body: bytes | None = None) -> dict[str, Any]:
    """The server's JSON answer to a GET (``body`` None) or a JSON POST of ``/api/2.0/mlflow/<endpoint>``."""
    import http.client  # here: http.client and ssl would cost every local analysis ~15 ms
    import urllib.request

    base, userinfo = _split_userinfo(ref.base)
    url = f"{base}/api/2.0/mlflow/{endpoint}"
    headers = {"Accept": "application/json", **_auth_header(userinfo)}
    if body is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
            doc = limits.loads(resp.read())  # any JSON: surrogates made U+FFFD, too deep a ValueError
    except urllib.error.HTTPError as err:
        if err.code in TRANSIENT_HTTP:
            raise TransientServerError(f"{ref.display}: the MLflow server answered HTTP {err.code}") from None
        raise _error(ref, err) from None
    except urllib.error.URLError as err:
        if isinstance(err.reason, TRANSIENT_OS):
            raise _transient(ref, err.reason) from None
        raise InputError(f"{ref.display}: cannot reach the MLflow server ({err.reason})") from None
    except TRANSIENT_OS as err:
        raise _transient(ref, err) from None
    except OSError as err:
        raise InputError(f"{ref.display}: cannot reach the MLflow server ({err})") from None
    except http.client.HTTPException as err:  # an answer cut short (IncompleteRead, a bad status line)
        what = type(err).__name__
        raise TransientServerError(f"{ref.display}: the MLflow server's answer broke off ({what})") from None
    except ValueError:
        raise InputError(f"{ref.display}: the server's answer is not JSON (is this an MLflow server?)") from None
    if not isinstance(doc, dict):
        raise InputError(f"{ref.display}: unexpected answer from the MLflow server")
    return doc


def run_info(ref: RunRef) -> tuple[list[str], dict[str, str], str]:
    """(metric keys, params, status: RUNNING, FINISHED, FAILED, KILLED...) of the run."""
    run = get_json(ref, "runs/get", {"run_id": ref.run_id}).get("run", {})
    data = run.get("data", {}) if isinstance(run, dict) else {}
    keys = sorted({m["key"] for m in data.get("metrics", []) if "key" in m})
    params = {p["key"]: p.get("value", "") for p in data.get("params", []) if "key" in p}
    status = run.get("info", {}).get("status", "") if isinstance(run, dict) else ""
    return keys, params, str(status)


def metric_history(ref: RunRef, key: str) -> list[dict[str, Any]]:
    """Every logged value of one metric, following ``next_page_token``."""
    out: list[dict[str, Any]] = []
    token = ""
    for _ in range(_MAX_PAGES):
        query = {"run_id": ref.run_id, "metric_key": key, "max_results": str(PAGE)}
        if token:
            query["page_token"] = token
        doc = get_json(ref, "metrics/get-history", query)
        out += doc.get("metrics", [])
        token = doc.get("next_page_token", "")
        if not token:
            break
    return out
