"""One analysis per log per test process.

A dozen modules check every real log (../shared/reallogs) and every fixture with plain
``pipeline.analyze(pipeline.load(path))`` and only read the report; each used to analyse the same
files again (about a fifth of the suite's time). ``report_of`` memoises that call on the file's
identity (path, size, mtime), so a file rewritten by a test is analysed afresh. Reports are frozen
dataclasses: a test must not change one it got from here. Tests that pass options, a config or
their own detectors call the pipeline themselves.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from logdoctor import pipeline
from logdoctor.errors import LogdoctorError
from logdoctor.model import Report


@cache
def _analysed(path: str, size: int, mtime_ns: int) -> Report | LogdoctorError:
    try:
        return pipeline.analyze(pipeline.load(path))
    except LogdoctorError as err:  # remembered too: a refusal is as deterministic as a report
        return err


def report_of(path: str | Path) -> Report:
    """``pipeline.analyze(pipeline.load(path))``, computed once per file per test process;
    raises the same LogdoctorError as the call would."""
    st = Path(path).stat()
    got = _analysed(str(path), st.st_size, st.st_mtime_ns)
    if isinstance(got, LogdoctorError):
        raise got
    return got


def report_or_none(path: str | Path) -> Report | None:
    """The report, or None for a file logdoctor refuses (not a run)."""
    try:
        return report_of(path)
    except LogdoctorError:
        return None
