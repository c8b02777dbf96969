"""The batching verdict's confidence is calibrated: a reliability table on freshly simulated runs."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from fixtures.simulator import as_run, simulate
from logdoctor import pipeline

BENCH = Path(__file__).resolve().parents[2] / "bench" / "confusion.py"
#: a scenario seed no other test uses (bench/confusion.py's convention: >= 1000); runs up to 12k samples
SEED, RUNS, MAX_SAMPLES = 4321, 100, 12_000
#: a bin (or the whole table) is calibrated when its accuracy lies within 3 binomial standard
#: errors of its mean confidence, plus 0.03 for the binning itself
SLACK = 0.03


def _draw() -> object:
    spec = importlib.util.spec_from_file_location("confusion", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _within(conf: np.ndarray, right: np.ndarray) -> tuple[bool, str]:
    c, acc, n = float(conf.mean()), float(right.mean()), conf.size
    tol = 3 * math.sqrt(c * (1 - c) / n) + SLACK
    return abs(acc - c) <= tol, f"n={n} mean confidence {c:.3f} accuracy {acc:.3f} tolerance {tol:.3f}"


@pytest.mark.slow
def test_confidence_matches_accuracy_on_fresh_runs() -> None:
    confusion = _draw()
    rng = np.random.default_rng(SEED)
    conf: list[float] = []
    right: list[bool] = []
    i = 0
    while len(conf) < RUNS:
        cfg = confusion.draw(rng, SEED * 100_000 + i)  # type: ignore[attr-defined]
        i += 1
        if cfg.n_samples > MAX_SAMPLES:  # the long runs take seconds each: bench/confusion.py has them
            continue
        table, truth = simulate(cfg)
        # the verdict as a report gives it: it names only causes the detectors' findings back
        verdict = pipeline.analyze(as_run(table)).verdict
        if verdict.confidence is None:  # inconclusive: it decided nothing, so it has no confidence
            continue
        conf.append(verdict.confidence)
        right.append(verdict.batching == truth["expected_verdict"])
    c, r = np.asarray(conf), np.asarray(right, dtype=float)
    ok, detail = _within(c, r)
    assert ok, f"overall: {detail}"
    for lo, hi in ((0.0, 0.8), (0.8, 0.95), (0.95, 0.99), (0.99, 1.0001)):
        m = (c >= lo) & (c < hi)
        if m.sum() >= 20:  # bins with fewer runs say too little
            ok, detail = _within(c[m], r[m])
            assert ok, f"[{lo}, {hi}): {detail}"
