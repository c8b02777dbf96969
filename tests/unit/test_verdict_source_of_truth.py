"""One source of truth: whatever the detector thresholds, the cause the verdict names is backed by a
finding in the same report (the verdict runs no private spike detector)."""

from __future__ import annotations

import pytest

from fixtures.simulator import SimConfig, as_run, simulate
from logdoctor.config import AnalysisConfig
from logdoctor.pipeline import analyze

#: the finding codes that back each cause the verdict can name
BACKING = {
    "nan": {"LD001"},
    "divergence": {"LD002"},
    "resume": {"LD003", "LD004"},
    "instability": {"LD102", "LD104"},
    "bad_batches": {"LD101"},
    "cyclic_lr": {"LD506"},
    "running_avg": {"LD204"},
    "staircase": {"LD203"},
}

SETTINGS = [
    {},
    {"spikes": {"z_threshold": 1000.0}},
    {"spikes": {"z_threshold": 1000.0, "grad_z_threshold": 1000.0, "grad_alone_z": 1000.0}},
    {"spikes": {"grad_alone_z": 1000.0}},
    {"spikes": {"z_threshold": 3.0, "min_ratio": 1.1}},
]


@pytest.mark.parametrize("options", SETTINGS, ids=["default", "z1000", "all1000", "gn_alone1000", "z3"])
@pytest.mark.parametrize("confounder", ["bad_batches", "instability", "nan", "resume", "cyclic_lr", "staircase"])
def test_named_cause_is_backed_by_a_reported_finding(confounder: str, options: dict) -> None:
    table, _ = simulate(SimConfig(confounder=confounder, n_samples=2500, seed=61))
    report = analyze(as_run(table), AnalysisConfig(options=options))
    v = report.verdict
    assert v is not None
    codes_ = {f.code for f in report.findings}
    for key in filter(None, str(v.evidence.get("causes") or "").split(",")):
        assert BACKING[key] & codes_, f"{key} named without {BACKING[key]} in {sorted(codes_)}"


def test_spikes_silenced_by_the_user_are_not_blamed() -> None:
    table, _ = simulate(SimConfig(confounder="bad_batches", n_samples=2500, seed=62))
    run = as_run(table)
    default = analyze(run).verdict
    assert default is not None and default.batching == "not_batching"
    assert str(default.evidence["causes"]).startswith("bad_batches")
    quiet = analyze(run, AnalysisConfig(options={"spikes": {"z_threshold": 1000.0}})).verdict
    assert quiet is not None and "bad_batches" not in str(quiet.evidence.get("causes"))
    ignored = analyze(run, AnalysisConfig(ignore=("LD101",))).verdict
    assert ignored is not None and "bad_batches" not in str(ignored.evidence.get("causes"))


def test_non_finite_loss_is_named_only_with_ld001_in_the_report() -> None:
    """LD001 decides non-finite loss; the verdict reads its finding and never decides it again: with
    LD001 ignored (or absent), no verdict says "non-finite loss" under a report without it."""
    table, _ = simulate(SimConfig(confounder="nan", n_samples=2500, seed=63))
    run = as_run(table)
    default = analyze(run)
    assert "LD001" in {f.code for f in default.findings}
    assert default.verdict.cause == "non-finite loss (NaN/inf)"
    ignored = analyze(run, AnalysisConfig(ignore=("LD001",)))
    assert "LD001" not in {f.code for f in ignored.findings}
    assert "nan" not in str(ignored.verdict.evidence.get("causes")) and "non-finite" not in ignored.verdict.cause
