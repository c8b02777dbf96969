"""Each batching verdict on simulated runs (direct path: Run built from the simulated table)."""

from __future__ import annotations

import pytest

from fixtures.simulator import SimConfig, as_run, simulate
from logdoctor.diagnosis.batching import BatchingDiagnosis, Diagnosis


def diagnose(cfg: SimConfig, *, epoch_column: bool = True) -> Diagnosis:
    table, _ = simulate(cfg)
    return BatchingDiagnosis().diagnose(as_run(table, epoch_column=epoch_column), [])


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("strategy", ["sorted_asc", "sorted_desc"])
def test_sorted_orders_are_found(strategy: str, seed: int) -> None:
    d = diagnose(SimConfig(strategy=strategy, n_samples=2500, seed=seed))
    assert d.verdict.batching == "sorted"
    assert d.verdict.evidence["lag1_len_mean"] > 0.5  # type: ignore[operator]
    assert [f.code for f in d.findings if f.code == "LD501"] == ["LD501"]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("epoch_column", [True, False])
def test_length_grouped_megabatches_are_grouped_not_sorted(seed: int, epoch_column: bool) -> None:
    d = diagnose(SimConfig(strategy="megabatch", n_samples=8000, seed=seed), epoch_column=epoch_column)
    assert d.verdict.batching == "grouped", d.verdict.summary
    ld505 = [f for f in d.findings if f.code == "LD505"]
    assert ld505 and ld505[0].severity.label == "warning"
    assert not {f.code for f in d.findings} & {"LD501", "LD502"}
    assert d.verdict.evidence["megabatch_period"] and d.verdict.evidence["megabatch_sampler"]


def test_full_sort_is_described_per_epoch_and_windows_as_megabatches() -> None:
    asc = diagnose(SimConfig(strategy="sorted_asc", n_samples=2500, seed=4)).verdict
    assert "ascending length order within each epoch" in asc.summary
    assert "with the epoch as its period" in asc.summary
    mega = diagnose(SimConfig(strategy="megabatch", n_samples=8000, seed=4)).verdict
    assert "descending length order within windows" in mega.summary
    assert "recomposed every epoch" in mega.summary


def test_sorted_hint_prescribes_buckets_with_the_logged_token_budget() -> None:
    v = diagnose(SimConfig(strategy="sorted_asc", n_samples=2500, seed=5)).verdict
    assert "logdoctor buckets LENGTHS --token-budget 8192" in v.hint
    assert v.evidence["token_budget_estimate"] == 8192


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_static_composition_is_found_from_signatures(seed: int) -> None:
    d = diagnose(SimConfig(strategy="static", n_samples=2500, seed=seed))
    ev = d.verdict.evidence
    assert d.verdict.batching == "static"
    assert ev["recurrence_kind"] == "signature"
    assert ev["recurrence_fraction"] > 0.9 and ev["recurrence_excess"] > 0.8  # type: ignore[operator]
    assert d.artifacts["recurrence_by_epoch"][0] == 0.0  # type: ignore[index]
    assert min(d.artifacts["recurrence_by_epoch"][1:]) > 0.9  # type: ignore[index]


def test_static_with_logging_every_fifth_step_expects_partial_recurrence() -> None:
    # 12k samples: at 6k (195 logged batches) a few truncated batches sharing a signature within
    # the epoch leave the occupancy test short of p < 1e-6 under the permutation null
    d = diagnose(SimConfig(strategy="static", n_samples=12000, epochs=6, log_every=5, seed=7))
    ev = d.verdict.evidence
    assert d.verdict.batching == "static"
    assert 0.2 < ev["recurrence_expected_if_static"] < 0.7  # type: ignore[operator]
    assert abs(ev["recurrence_fraction"] - ev["recurrence_expected_if_static"]) < 0.15  # type: ignore[operator]


@pytest.mark.parametrize("strategy", ["bucketed", "shuffled"])
@pytest.mark.parametrize("seed", [1, 2])
def test_recomposed_shuffles_are_healthy(strategy: str, seed: int) -> None:
    d = diagnose(SimConfig(strategy=strategy, n_samples=2500, seed=seed))
    assert d.verdict.batching == "healthy"
    assert not {f.code for f in d.findings} & {"LD501", "LD502", "LD202"}


def test_bucketed_loss_tracks_length_but_stays_healthy() -> None:
    d = diagnose(SimConfig(strategy="bucketed", n_samples=3000, length_effect=0.4, seed=8))
    assert d.verdict.batching == "healthy"
    ld503 = [f for f in d.findings if f.code == "LD503"]
    assert ld503 and abs(ld503[0].evidence["loss_length_rho"]) > 0.3  # type: ignore[arg-type]


def test_long_run_logged_every_tenth_step() -> None:
    d = diagnose(SimConfig(strategy="sorted_desc", n_samples=40000, epochs=4, log_every=10, seed=9))
    assert d.verdict.batching == "sorted"


def test_epochs_are_inferred_without_an_epoch_column() -> None:
    cfg = SimConfig(strategy="static", n_samples=2500, seed=10)
    _, truth = simulate(cfg)
    d = diagnose(cfg, epoch_column=False)
    ev = d.verdict.evidence
    assert d.verdict.batching == "static"
    assert ev["epoch_source"] == "inferred from batch-signature recurrence"
    assert abs(ev["steps_per_epoch"] / truth["steps_per_epoch"] - 1) < 0.05  # type: ignore[operator]
    srt = diagnose(SimConfig(strategy="sorted_asc", n_samples=2500, seed=10), epoch_column=False).verdict
    assert srt.evidence["epoch_source"] == "inferred from batch-length resets"


def test_healthy_without_epochs_is_inconclusive_and_says_what_to_log() -> None:
    d = diagnose(SimConfig(strategy="bucketed", n_samples=2500, seed=11), epoch_column=False)
    assert d.verdict.batching == "inconclusive"
    assert "batch_fp" in d.verdict.summary
    assert "LD504" in {f.code for f in d.findings}


def test_confidence_differs_between_verdicts_and_stays_in_0_1() -> None:
    """Distinct values only; calibration: tests/integration/test_confidence_reliability.py."""
    confs = {
        round(diagnose(SimConfig(strategy=s, n_samples=2500, seed=12)).verdict.confidence, 3)
        for s in ("sorted_asc", "static", "bucketed", "megabatch")
    }
    assert len(confs) >= 3 and all(0 < c < 1 for c in confs)


def test_static_hint_says_to_reform_batches_every_epoch() -> None:
    v = diagnose(SimConfig(strategy="static", n_samples=2500, seed=2)).verdict
    assert v.batching == "static"
    assert "Re-form the batches every epoch" in v.hint and "shuffle within length buckets" in v.hint
    assert "Shuffle every epoch" not in v.hint
    assert "fix_bucketed_vs_random_throughput" in v.evidence  # priced as before
