"""A job that died on a fatal signal, as the shell reports it (bash's job status): a native crash.

bash prints ``<script>: line 3:  3904 Aborted  (core dumped) python train.py`` (siglist.c names,
jobs.c's ``(core dumped)``) when the process dies on SIGABRT, SIGSEGV, SIGBUS, SIGFPE or SIGILL.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers.events import scan_events
from logdoctor.model import Report, Severity


def _body(rows: int, start: int = 1) -> list[str]:
    return [f"step {k * 100} | loss {3 - k / 100:.4f} | lr 1.0e-04" for k in range(start, start + rows)]


def _report(tmp_path: Path, lines: list[str]) -> Report:
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    return pipeline.analyze(pipeline.load(str(path)))


@pytest.mark.parametrize(
    "line",
    [
        "train.sh: line 26: 23870 Aborted                 (core dumped) $marian_home/marian --model m.npz",
        "/tmp/tmpn7e_t3z0: line 3: 146734 Segmentation fault      (core dumped) python train.py",
        "Segmentation fault (core dumped)",
        "Bus error",
    ],
)
def test_the_shell_job_status_of_a_fatal_signal_ended_the_run(tmp_path: Path, line: str) -> None:
    report = _report(tmp_path, [*_body(60), line])
    st = report.meta.structure
    assert st is not None and st.failure is not None and st.failure.kind == "signal_death"
    assert st.ending == "crashed"
    (f,) = [f for f in report.findings if f.code == "LD010"]
    assert f.severity is Severity.ERROR and f.first_step == 6000


def test_a_signal_death_answered_by_a_relaunch_is_a_crashed_launch(tmp_path: Path) -> None:
    died = "/tmp/tmp6c9asv8v: line 3:  3904 Aborted                 (core dumped) python train.py"
    lines = [*_body(30), "free(): invalid pointer", died, "Resuming from checkpoint ckpt-2000", *_body(40, 21)]
    report = _report(tmp_path, lines)
    (f,) = [f for f in report.findings if f.code == "LD014"]
    assert f.severity is Severity.WARNING and "fatal signal" in f.message


def test_words_about_signals_are_no_death() -> None:
    """Docs and messages that name a signal without a job's status line."""
    lines = pl.DataFrame(
        {
            "line_no": [1, 2, 3],
            "line": [
                "   In case you get a ``Segmentation fault (core dump)`` error, please use:",
                "Aborted training run reported a Bus error count of 0",
                "handling Floating point exception flags in the kernel",
            ],
        }
    )
    assert scan_events(lines) == ()
