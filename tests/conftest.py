"""Shared pytest fixtures: repository paths and the optional real-logs folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
#: the public training logs the reallogs tests read (``$LOGDOCTOR_REALLOGS`` names another folder)
REALLOGS = Path(os.environ.get("LOGDOCTOR_REALLOGS") or REPO.parent / "shared" / "reallogs")
#: CI sets this: there a missing ../shared/reallogs fails the tests that read it instead of skipping them
REQUIRE_REALLOGS = os.environ.get("LOGDOCTOR_REQUIRE_REALLOGS", "") not in ("", "0")

# Hypothesis profiles. "ci" (the default, what `.ci/run` and a plain `pytest` use) is derandomized: the
# examples are a function of each test, so a submission is judged on the same inputs every run and a red
# CI means the change broke something, not that a fresh draw met an old bug. Exploring is the "thorough"
# profile's job, with fresh seeds, before each submission (what it finds becomes an explicit test case):
#   HYPOTHESIS_PROFILE=thorough python -m pytest -p no:cacheprovider tests/property \
#       tests/unit/test_ndjson.py tests/unit/test_jsonl_lines.py --hypothesis-seed=$RANDOM
_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile(
    "ci",
    max_examples=100,
    derandomize=True,
    database=None,  # type: ignore[arg-type]
    **_COMMON,
)
settings.register_profile("thorough", max_examples=2000, **_COMMON)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def fixtures_dir() -> Path:
    """The folder of generated fixture logs."""
    return FIXTURES


@pytest.fixture
def reallogs_dir(request: pytest.FixtureRequest) -> Path:
    """``../shared/reallogs``; the test is skipped when it is absent (failed where
    ``$LOGDOCTOR_REQUIRE_REALLOGS`` is set, as in CI), and must carry the ``reallogs`` marker
    (``-m "not reallogs"`` deselects every test that reads the folder)."""
    if request.node.get_closest_marker("reallogs") is None:
        pytest.fail(f"{request.node.nodeid} reads ../shared/reallogs: mark it @pytest.mark.reallogs")
    if not (REALLOGS / "MANIFEST.tsv").is_file():
        missing = f"{REALLOGS} is not present: `python scripts/fetch_reallogs.py` fetches it"
        if REQUIRE_REALLOGS:
            pytest.fail(f"{missing} (LOGDOCTOR_REQUIRE_REALLOGS is set: the real logs are required)")
        pytest.skip(missing)
    return REALLOGS


#: The machine's device nodes that a careless ``-o`` (written by rename) would replace with a file.
_DEVICES = ("/dev/null", "/dev/full", "/dev/zero")


def _device_ids() -> dict[str, tuple[int, int, int] | None]:
    ids: dict[str, tuple[int, int, int] | None] = {}
    for node in _DEVICES:
        try:
            st = os.stat(node)
            ids[node] = (st.st_mode, st.st_rdev, st.st_ino)
        except OSError:
            ids[node] = None
    return ids


_DEVICES_AT_START = _device_ids()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when anything in it replaced one of the machine's device nodes."""
    changed = [n for n, ident in _device_ids().items() if ident != _DEVICES_AT_START[n]]
    if changed:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        print(f"\nERROR: the test run replaced {', '.join(changed)} (an output written over a device node)")


#: Runs of the MLflow experiment ``fleet`` that the shared tracking server holds (fixtures/fleet.py).
MLFLOW_FLEET_RUNS = 20


@pytest.fixture(scope="session")
def mlflow_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One real ``mlflow server`` (sqlite, 127.0.0.1) for the session's MLflow tests; its store
    already holds the experiment ``fleet`` of ``MLFLOW_FLEET_RUNS`` runs, logged with the real
    client straight into the store before the server starts (over HTTP it took ~2 s a run)."""
    pytest.importorskip("mlflow", reason="mlflow is not installed (pip install mlflow)")
    from fixtures.fleet import write_mlflow_fleet
    from tests.mlflow_support import mlflow_server

    root = tmp_path_factory.mktemp("mlflow")
    write_mlflow_fleet(f"sqlite:///{root / 'mlflow.db'}", MLFLOW_FLEET_RUNS)
    with mlflow_server(root) as url:
        yield url
