"""The unit of work of a fleet: one run in, its RunResult (JSON document, summary values) out."""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass

from logdoctor.config import AnalysisConfig
from logdoctor.errors import ConfigError
from logdoctor.model import Outcome, RunResult

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: Threads each worker's polars may use: the workers are the parallelism.
WORKER_ENV = {"POLARS_MAX_THREADS": "1"}


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """What every task of a fleet is asked: the analysis configuration, and whether to render the
    run's own HTML report on the worker (``-f html``; the driver never holds a step table)."""

    cfg: AnalysisConfig
    html: bool = False


def one_thread() -> None:
    """Polars on one thread in this worker, when polars is not loaded yet (its pool is fixed then)."""
    if "polars" not in sys.modules:
        os.environ.update(WORKER_ENV)


def diagnose(entry: tuple[str, bool], spec: TaskSpec) -> RunResult:
    """Analyse one ``(address, found in a folder)`` entry; an expected error is an error result."""
    from logdoctor.pipeline import analyze_one

    return result_of(analyze_one(entry[0], spec.cfg, entry[1]), spec.html)


def result_of(outcome: Outcome, html: bool = False) -> RunResult:
    """The RunResult of an Outcome: its document and summary values (and HTML page when asked)."""
    from logdoctor.renderers.jsonreport import error_dict, report_dict
    from logdoctor.renderers.labels import UNREADABLE, verdict_words
    from logdoctor.renderers.rows import loss_buckets
    from logdoctor.sanitize import clean, redact

    r = outcome.report
    if r is None:
        doc = json.dumps(clean(error_dict(outcome), redact), allow_nan=False)
        why = (outcome.error or "").removeprefix(f"{outcome.path}: ").split(" (")[0]
        return RunResult(
            path=outcome.path,
            document=doc,
            exit_code=int(outcome.exit_code),
            status=UNREADABLE,
            worst=why,
            error=outcome.error,
            skipped=outcome.skipped,
        )
    page = None
    if html:
        from logdoctor.renderers.html import render_html

        page = render_html(r)
    return RunResult(
        path=outcome.path,
        document=json.dumps(clean(report_dict(r), redact), allow_nan=False),
        exit_code=int(outcome.exit_code),
        status=r.status,
        steps=r.series.steps,
        worst=r.problems[0].rule if r.problems else "none",
        batching=verdict_words(r.verdict.batching).short,
        rules=tuple(f.rule for f in r.problems),
        spark=tuple(float(v) for v in loss_buckets(r)),
        html=page,
    )


def failed(path: str, err: BaseException) -> RunResult:
    """The error result of a run whose task failed on the engine (a worker lost past the engine's
    retries, a bug): one error row, never a failed fleet."""
    lines = [ln.strip() for ln in _ANSI.sub("", str(err)).splitlines() if ln.strip()]
    message = f"{path}: the task failed on the engine ({type(err).__name__}: {lines[-1] if lines else ''})"
    return result_of(Outcome(path=path, report=None, error=message, exit_code=2))


def missing_engine(kind: str) -> ConfigError:
    """The error for an engine that is not installed."""
    return ConfigError(f"--executor {kind} needs {kind}: pip install 'logdoctor[{kind}]'")
