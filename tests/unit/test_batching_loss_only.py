"""Loss alone (no batch statistics): an epoch sawtooth means sorted order; else inconclusive."""

from __future__ import annotations

import pytest

from fixtures.simulator import SimConfig, as_run, simulate
from logdoctor.diagnosis.batching import BatchingDiagnosis, Diagnosis


def diagnose(cfg: SimConfig, drop: tuple[str, ...] = ()) -> Diagnosis:
    table, _ = simulate(cfg)
    return BatchingDiagnosis().diagnose(as_run(table.drop(*drop)), [])


@pytest.mark.parametrize("strategy", ["sorted_asc", "sorted_desc"])
@pytest.mark.parametrize("seed", [61, 62])
def test_epoch_sawtooth_means_sorted(strategy: str, seed: int) -> None:
    d = diagnose(SimConfig(strategy=strategy, n_samples=3000, batch_stats=False, seed=seed))
    assert d.verdict.batching == "sorted"
    assert "LD202" in {f.code for f in d.findings}
    assert d.verdict.evidence["sawtooth_ratio"] > 0.5  # type: ignore[operator]
    assert "len_min" in d.verdict.summary  # says what to log to confirm


@pytest.mark.parametrize("strategy", ["static", "bucketed", "shuffled"])
def test_without_a_sawtooth_composition_is_undecidable(strategy: str) -> None:
    d = diagnose(SimConfig(strategy=strategy, n_samples=3000, batch_stats=False, seed=63))
    assert d.verdict.batching == "inconclusive"
    ld504 = [f for f in d.findings if f.code == "LD504"]
    assert ld504 and "batch_fp" in ld504[0].message


def test_sawtooth_without_lr_is_not_blamed_on_batching() -> None:
    """Without the lr an epoch-periodic schedule could make the sawtooth, so it is never read as a
    length sort; the batch-to-batch repeat of a fixed order (issue 29: the high-passed loss at the
    same position in consecutive epochs, which no smooth lr cycle makes) still shows the batches come
    back in the same order every epoch: static, and it claims no length order."""
    d = diagnose(SimConfig(strategy="sorted_asc", n_samples=3000, batch_stats=False, seed=64), drop=("lr",))
    assert d.verdict.batching == "static" and d.verdict.cause == "static batches in a fixed order (from the loss)"
    assert "length order" not in d.verdict.summary and "sawtooth" not in d.verdict.summary


def test_epoch_periodic_lr_sawtooth_is_the_schedule() -> None:
    d = diagnose(SimConfig(confounder="cyclic_lr_epoch", n_samples=3000, batch_stats=False, seed=65))
    assert d.verdict.batching == "not_batching"
    assert d.verdict.evidence["cause_loss_lr_rho"] > 0.1  # type: ignore[operator]


def test_staircase_and_running_average_findings() -> None:
    stair = diagnose(SimConfig(confounder="staircase", n_samples=3000, batch_stats=False, seed=66))
    assert "LD203" in {f.code for f in stair.findings}
    assert "LD202" not in {f.code for f in stair.findings}
    # with an epoch column the structure stage reads the running mean back (structure/runmean.py)
    ravg = diagnose(SimConfig(confounder="running_avg", n_samples=3000, batch_stats=False, seed=66))
    ld204 = [f for f in ravg.findings if f.code == "LD204"]
    assert ld204 and ld204[0].evidence["read_back"] is True
    assert ld204[0].evidence["noise_slope"] < -0.8  # type: ignore[operator]
    assert ravg.verdict.batching == "not_batching"


def test_running_average_seen_in_the_epoch_shape_when_not_read_back() -> None:
    """Epochs known only from the steps per epoch (no column, no batch counter): the running mean
    stays in the loss and the epoch shape names it (noise ≥ 4x larger early in the epoch)."""
    from tests.unit.synth import make_run, running_average

    d = BatchingDiagnosis().diagnose(make_run(running_average(3000, 3), steps_per_epoch=500), [])
    ld204 = [f for f in d.findings if f.code == "LD204"]
    assert ld204 and ld204[0].evidence["noise_ratio"] > 4  # type: ignore[operator]


def test_ld201_at_the_epoch_raises_loss_only_confidence() -> None:
    from logdoctor import codes

    cfg = SimConfig(strategy="sorted_asc", n_samples=3000, batch_stats=False, seed=67)
    table, truth = simulate(cfg)
    run = as_run(table)
    alone = BatchingDiagnosis().diagnose(run, []).verdict
    ev = {"period": float(truth["steps_per_epoch"]), "p_value": 1e-8, "epoch_ratio": 1.0}  # type: ignore[arg-type]
    backed = BatchingDiagnosis().diagnose(run, [codes.finding("LD201", "p", evidence=ev)]).verdict
    assert alone.batching == backed.batching == "sorted"
    assert backed.confidence > alone.confidence
