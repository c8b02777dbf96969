"""A tiny real detector for CLI/config tests while the real detectors live on other branches."""

from __future__ import annotations

import numpy as np
import pytest

from logdoctor import codes
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.model import LINE_NO, LOSS, STEP, Run


class NanProbe(Analyzer):
    """LD001 when more than ``max_nan`` losses are NaN/inf."""

    name = "nanprobe"

    def __init__(self, *, max_nan: int = 0) -> None:
        self.max_nan = max_nan

    def analyze(self, run: Run) -> Detection:
        loss = run.table[LOSS].to_numpy()
        bad = np.flatnonzero(~np.isfinite(loss))
        if bad.size <= self.max_nan:
            return Detection()
        first = int(bad[0])
        f = codes.finding(
            "LD001",
            f"Loss is NaN at {bad.size} steps.",
            first_step=int(run.table[STEP][first]),
            last_step=int(run.table[STEP][int(bad[-1])]),
            line=int(run.table[LINE_NO][first]),
            evidence={"nonfinite_steps": int(bad.size)},
        )
        return Detection(findings=(f,))


@pytest.fixture
def with_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register NanProbe as the only detector for the test."""
    monkeypatch.setattr("logdoctor.pipeline.ANALYZERS", (NanProbe,))
    monkeypatch.setattr("logdoctor.configfile.ANALYZERS", (NanProbe,))
