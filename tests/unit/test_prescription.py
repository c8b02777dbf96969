"""A sorted or static verdict's hint prices the fix from the batch lengths the log saw."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline

SIM = Path(__file__).resolve().parents[2] / "fixtures" / "sim"


@pytest.mark.parametrize(("name", "verdict"), [("sorted_asc.log", "sorted"), ("static.log", "static")])
def test_faulty_batching_hint_carries_a_bucket_estimate(name: str, verdict: str) -> None:
    report = pipeline.analyze(pipeline.load(str(SIM / name)))
    v = report.verdict
    assert v.batching == verdict
    assert "logdoctor buckets" in v.hint and "Estimated from the batches in this log" in v.hint
    assert int(v.evidence["fix_buckets"]) >= 1  # type: ignore[arg-type]
    kept = float(v.evidence["fix_bucketed_vs_sorted_throughput"])  # type: ignore[arg-type]
    gain = float(v.evidence["fix_bucketed_vs_random_throughput"])  # type: ignore[arg-type]
    assert 0.3 < kept <= 1.0 and gain >= 1.0
    assert any(f.code in ("LD501", "LD502") and "Estimated from" in f.hint for f in report.findings)


@pytest.mark.parametrize("name", ["bucketed.log", "loss_only_sorted.log", "cyclic_lr.log"])
def test_no_estimate_without_a_fault_or_without_lengths(name: str) -> None:
    v = pipeline.analyze(pipeline.load(str(SIM / name))).verdict
    assert "fix_buckets" not in v.evidence and "Estimated from" not in v.hint
