"""Failure injection: each failure class planted in real healthy logs is reported at its severity; bases stay silent."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import Report, Severity
from tests.conftest import FIXTURES, REALLOGS

_NUM = re.compile(r"[-+]?\d+\.\d+(?:[eE][-+]?\d+)?|[-+]?\d+(?:[eE][-+]?\d+)?")

#: (key, path, has a plan): real healthy runs of several shapes (a training loop's ``step N/T | loss=``,
#: modded-nanogpt's ``step:N/T train_loss:``, nanoGPT-style ``[train] iter N: loss``).
BASES = [
    ("loop_random_loss", FIXTURES / "realruns" / "loop_random_loss.log", True),
    pytest.param(("moddednanogpt", REALLOGS / "moddednanogpt_muon_record.txt", True), marks=pytest.mark.reallogs),
    pytest.param(("nanogpt_seis", REALLOGS / "nanogpt_seis_train_mix.log", False), marks=pytest.mark.reallogs),
]


class Base:
    """A healthy log's lines and where its training rows are (line number, loss)."""

    def __init__(self, path: Path) -> None:
        self.lines = path.read_text(errors="replace").splitlines()
        run = pipeline.load(str(path))
        t = run.table.sort("line_no")
        self.rows = list(zip(t["line_no"].to_list(), t["loss"].to_list(), strict=True))

    def with_loss(self, at: range, value: Callable[[float], float]) -> list[str]:
        """The lines with the loss of the rows ``at`` (indices) replaced by ``value(loss)``."""
        out = list(self.lines)
        for line_no, loss in (self.rows[i] for i in at):
            text = out[line_no - 1]
            for m in _NUM.finditer(text):
                if abs(float(m.group()) - loss) <= 1e-6 * max(1.0, abs(loss)):
                    out[line_no - 1] = text[: m.start()] + _fmt(value(loss)) + text[m.end() :]
                    break
        return out

    def cut(self, frac: float) -> list[str]:
        """The lines up to the training row at ``frac`` of the rows."""
        return self.lines[: self.rows[int(len(self.rows) * frac)][0]]

    def insert(self, fracs: tuple[float, ...], text: str) -> list[str]:
        """The lines with ``text`` after the training row at each of ``fracs``."""
        out = list(self.lines)
        for frac in sorted(fracs, reverse=True):
            out.insert(self.rows[int(len(self.rows) * frac)][0], text)
        return out


def _fmt(v: float) -> str:
    return "nan" if v != v else f"{v:.4f}"


def _analyze(tmp_path: Path, lines: list[str]) -> Report:
    path = tmp_path / "injected.log"
    path.write_text("\n".join(lines) + "\n")
    return pipeline.analyze(pipeline.load(str(path)))


def _worst(report: Report, *codes: str) -> Severity | None:
    return max((f.severity for f in report.findings if f.code in codes), default=None)


def _nonfinite_crash(b: Base) -> list[str]:
    """The log cut at 60% of its rows, its last four losses NaN, then fairseq's stop on a NaN loss."""
    at = int(len(b.rows) * 0.6)
    lines = b.with_loss(range(at - 3, at + 1), lambda v: float("nan"))[: b.rows[at][0]]
    return [*lines, "FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding."]


TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "train.py", line 212, in <module>',
    "    loss.backward()",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
]

#: name -> (plant it, the codes that report it, their severity, needs a plan)
PLANTS: dict[str, tuple[Callable[[Base], list[str]], tuple[str, ...], Severity, bool]] = {
    "crash_traceback": (lambda b: b.cut(0.6) + TRACEBACK, ("LD010",), Severity.ERROR, False),
    "os_kill": (lambda b: [*b.cut(0.6), "Killed"], ("LD010",), Severity.ERROR, False),
    "nonfinite_crash": (lambda b: _nonfinite_crash(b), ("LD001", "LD010"), Severity.ERROR, False),
    "recovered_ooms": (
        lambda b: b.insert((0.3, 0.5, 0.7), "| WARNING: ran out of memory, skipping batch"),
        ("LD012",),
        Severity.WARNING,
        False,
    ),
    "skipped_nonfinite": (
        lambda b: b.insert((0.4, 0.6), "WARNING: The grad norm is nan. Skipping updating the model."),
        ("LD013",),
        Severity.WARNING,
        False,
    ),
    "short_collapse": (
        lambda b: b.with_loss(range(int(len(b.rows) * 0.85), len(b.rows)), lambda v: v * 6),
        ("LD002", "LD403", "LD101"),
        Severity.WARNING,
        False,
    ),
    "silent_stop": (lambda b: b.cut(0.6), ("LD016",), Severity.WARNING, True),
    "zero_loss": (
        lambda b: b.with_loss(range(len(b.rows) // 2, len(b.rows)), lambda v: 0.0),
        ("LD025",),
        Severity.WARNING,
        False,
    ),
}


@pytest.fixture(scope="module", params=BASES, ids=lambda p: str(p[0]))
def base(request: pytest.FixtureRequest) -> tuple[Base, bool]:
    _key, path, planned = request.param
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    return Base(path), planned


def test_the_untouched_log_stays_silent(base: tuple[Base, bool], tmp_path: Path) -> None:
    report = _analyze(tmp_path, base[0].lines)
    assert report.status == "ok", [f.code for f in report.problems]


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_each_planted_failure_is_reported_at_its_severity(base: tuple[Base, bool], plant: str, tmp_path: Path) -> None:
    make, codes, severity, needs_plan = PLANTS[plant]
    b, planned = base
    report = _analyze(tmp_path, make(b))
    if needs_plan and not planned:
        assert _worst(report, *codes) is None  # no plan: the ending is unknown, never a silent stop
        assert report.meta.structure is not None and report.meta.structure.ending == "unknown"
        return
    worst = _worst(report, *codes)
    assert worst is not None and worst >= severity, (plant, [(f.code, f.severity.label) for f in report.findings])
    assert ("ok", "warning", "error").index(report.status) >= ("ok", "warning", "error").index(severity.label)
