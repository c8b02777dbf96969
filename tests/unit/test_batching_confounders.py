"""Must-not cases: healthy or confounded runs are never sorted/static, and the cause is named."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from fixtures.simulator import EXPECTED_CAUSE as CAUSES
from fixtures.simulator import LOSS_ONLY_UNDECIDED, SimConfig, as_run, simulate
from logdoctor import codes
from logdoctor.detectors.nonfinite import NonFiniteDetector
from logdoctor.detectors.spikes import SpikeDetector
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.model import Finding, Run, RunMeta, Verdict, validate_run


def verdict(cfg: SimConfig, findings: list[Finding] | None = None) -> Verdict:
    """The verdict given the spike and non-finite detectors' findings (the verdict names no spike
    and no NaN that the report lacks)."""
    table, _ = simulate(cfg)
    run = as_run(table)
    found = [*SpikeDetector().analyze(run).findings, *NonFiniteDetector().analyze(run).findings]
    return BatchingDiagnosis().diagnose(run, found + (findings or [])).verdict


@pytest.mark.parametrize("stats", [True, False])
@pytest.mark.parametrize("confounder", sorted(CAUSES))
@pytest.mark.parametrize("seed", [31, 32])
def test_confounders_are_not_batching_with_the_right_cause(confounder: str, seed: int, stats: bool) -> None:
    cfg = SimConfig(confounder=confounder, n_samples=2500, batch_stats=stats, seed=seed)
    v = verdict(cfg)
    # spikes without batch statistics may be long batches: inconclusive, the cause still named
    assert v.batching == simulate(cfg)[1]["expected_verdict"]
    assert v.batching == ("inconclusive" if confounder in LOSS_ONLY_UNDECIDED and not stats else "not_batching")
    assert (v.confidence is None) == (v.batching == "inconclusive")
    first = str(v.evidence["causes"]).split(",")[0]
    backed = {f.code for f in SpikeDetector().analyze(as_run(simulate(cfg)[0])).findings}
    if confounder == "instability" and "LD102" not in backed:
        # the verdict names only what the report shows: without LD102 (the heavy-tailed spike null
        # can leave a short run's weak grad-norm coincidences below it) instability rests on the
        # grad-norm findings that remain (LD104), or the spikes are named as bad batches
        assert first in ("instability", "bad_batches")
    else:
        assert first == CAUSES[confounder]


@pytest.mark.parametrize("strategy", ["bucketed", "shuffled"])
@pytest.mark.parametrize("confounder", ["none", *sorted(CAUSES)])
def test_healthy_pipelines_are_never_sorted_or_static(strategy: str, confounder: str) -> None:
    for seed in (41, 42):
        v = verdict(SimConfig(strategy=strategy, confounder=confounder, n_samples=2000, log_every=2, seed=seed))
        assert v.batching not in ("sorted", "static"), v.summary


def test_constant_tokens_per_step_packing_is_not_sorted_or_static() -> None:
    n = 600
    rng = np.random.default_rng(43)
    table = pl.DataFrame(
        {
            "step": np.arange(1, n + 1),
            "line_no": np.arange(1, n + 1),
            "loss": 2 + np.exp(-np.arange(n) / 200) + rng.normal(0, 0.05, n),
            "tokens": np.full(n, 4096.0),
            "seqs": np.full(n, 4.0),
            "epoch": np.arange(n) // 200,
        }
    )
    v = BatchingDiagnosis().diagnose(Run(validate_run(table), RunMeta("-", "test")), []).verdict
    assert v.batching not in ("sorted", "static")
    assert v.evidence["length_spread"] == 0.0


def _with_findings(codes_: list[str]) -> list[Finding]:
    return [codes.finding(c, "from a detector", confidence=0.9) for c in codes_]


@pytest.mark.parametrize(
    ("code", "cause"),
    [("LD001", "nan"), ("LD002", "divergence"), ("LD003", "resume"), ("LD102", "instability")],
)
def test_detector_findings_name_the_cause(code: str, cause: str) -> None:
    v = verdict(SimConfig(strategy="bucketed", n_samples=2000, seed=44), _with_findings([code]))
    assert v.batching == "not_batching"
    assert str(v.evidence["causes"]).split(",")[0] == cause
    assert v.evidence["cause_from_finding"] == code


def test_a_cause_named_by_a_detector_and_by_our_check_is_listed_once() -> None:
    v = verdict(SimConfig(confounder="nan", n_samples=2000, seed=48), _with_findings(["LD001"]))
    assert v.evidence["causes"] == "nan"


def test_batching_fault_outranks_detector_confounders() -> None:
    v = verdict(SimConfig(strategy="sorted_asc", n_samples=2000, seed=45), _with_findings(["LD102"]))
    assert v.batching == "sorted"
    assert "instability" in str(v.evidence["causes"])


def test_ld201_period_is_related_to_the_epoch() -> None:
    cfg = SimConfig(strategy="sorted_asc", n_samples=2000, seed=46)
    table, truth = simulate(cfg)
    period = codes.finding(
        "LD201",
        "periodic",
        evidence={
            "period": float(truth["steps_per_epoch"]),  # type: ignore[arg-type]
            "p_value": 1e-9,
            "power_ratio": 30.0,
        },
    )
    v = BatchingDiagnosis().diagnose(as_run(table), [period]).verdict
    assert v.evidence["period_epoch_ratio"] == 1.0
    assert v.evidence["period_p_value"] == 1e-9 and v.evidence["period_power_ratio"] == 30.0


def test_resume_cause_uses_ingest_metadata() -> None:
    table, _ = simulate(SimConfig(strategy="bucketed", n_samples=2000, seed=47))
    run = as_run(table)
    resumed = dataclasses.replace(run, meta=dataclasses.replace(run.meta, resumes=1, resume_steps=(120,)))
    v = BatchingDiagnosis().diagnose(resumed, []).verdict
    assert v.batching == "not_batching" and v.evidence["cause_first_resume_step"] == 120
