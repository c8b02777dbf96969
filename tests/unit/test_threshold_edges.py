"""Documented detector thresholds at their edges: an input just inside and one just outside each,
asserting what the report does; every number is read from the detector, none restated."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from fixtures.simulator import SimConfig, as_run, simulate
from logdoctor.detectors.divergence import DivergenceDetector
from logdoctor.detectors.overfitting import OverfittingDetector
from logdoctor.detectors.periodicity import PeriodicityDetector
from logdoctor.detectors.spikes import SpikeDetector
from logdoctor.diagnosis import fixedorder, lengthstats, megabatch, rules
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.diagnosis.facts import Facts
from logdoctor.diagnosis.lengthstats import LossLength
from logdoctor.diagnosis.thresholds import DEFAULT
from logdoctor.model import Run, Severity
from tests.unit.synth import healthy, make_run

# --- LD410 / LD412: the eval loss rose past its best -------------------------------------------------

#: Evals falling to a best of 1.99 among 2.0s: the best level (median of the best and its neighbours)
#: is 2.0, and the successive differences are mostly 0, so the eval noise is 0 and the rise needed is
#: ``min_rel_rise`` of the best level alone.
_HEAD = (2.2,) * 5 + (2.0,) * 5 + (1.99,)
_BEST_LEVEL = 2.0


def _with_evals(run: Run, after: list[float]) -> Run:
    values = np.array([*_HEAD, *after])
    steps = np.linspace(100, 2000, values.size).astype(np.int64)
    evals = pl.DataFrame({"step": steps, "line_no": steps + 10, "eval_loss": values})
    return dataclasses.replace(run, evals=evals)


def _falling_train() -> Run:
    return make_run(healthy(2000, 1, tau=400, floor=0.5))


def _codes(run: Run) -> list[str]:
    return [f.code for f in OverfittingDetector().analyze(run).findings]


@pytest.mark.parametrize(("share", "codes"), [(1.05, ["LD410"]), (0.95, [])])
def test_ld410_needs_a_rise_of_min_rel_rise(share: float, codes: list[str]) -> None:
    """Evals that rise to just above ``min_rel_rise`` of the best level are overfitting; just below, not."""
    level = _BEST_LEVEL * (1 + share * OverfittingDetector().min_rel_rise)
    assert _codes(_with_evals(_falling_train(), [2.0, 2.0] + [level] * 7)) == codes


def test_ld410_needs_both_rise_tests_an_eval_loss_that_came_back_is_not_overfitting() -> None:
    """The later evals rose well past the best, but the last one is back at the best level: no LD410
    (one test alone printed "rose to 2.0 (+0%)"), and no LD412 either."""
    assert _codes(_with_evals(_falling_train(), [2.0, 2.0] + [2.3] * 6 + [2.0])) == []


def test_ld410_needs_both_rise_tests_one_high_last_eval_is_not_overfitting() -> None:
    """Only the last eval is high; the later half's median stays at the best level: no LD410."""
    assert _codes(_with_evals(_falling_train(), [2.0] * 8 + [2.3])) == []


@pytest.mark.parametrize(("share", "code"), [(1.05, "LD410"), (0.95, "LD412")])
def test_the_training_loss_must_fall_by_min_train_drop_for_overfitting(share: float, code: str) -> None:
    """The same eval rise is overfitting (LD410) when the training loss fell by just over
    ``min_train_drop`` from the best eval step to the end, and an eval loss rise (LD412) just under it."""
    drop = share * OverfittingDetector().min_train_drop
    train = np.where(np.arange(2000) < 1150, 1.0, 1.0 - drop)
    assert _codes(_with_evals(make_run(train), [2.0, 2.0] + [2.3] * 7)) == [code]


# --- LD201: a period below one step's noise and the information share ----------------------------------


def _periodic(amplitude: float, seed: int) -> Run:
    """A loss whose log repeats every 37 steps with peak-to-peak ``amplitude``, under log-normal noise
    of sigma 0.08 (larger than the cycle): the period matches no epoch (none is known)."""
    rng = np.random.default_rng(seed)
    t = np.arange(6000)
    return make_run(2.0 * np.exp(amplitude / 2 * np.sin(2 * np.pi * t / 37.0) + rng.normal(0, 0.08, t.size)))


@pytest.mark.parametrize(("amplitude", "seed", "severity"), [(0.06, 1, Severity.WARNING), (0.04, 2, Severity.INFO)])
def test_ld201_below_the_noise_is_information_only_under_max_info_amplitude(
    amplitude: float, seed: int, severity: Severity
) -> None:
    """A cycle smaller than one step's noise is information when its amplitude is under
    ``max_info_amplitude`` of the loss, and a warning just over it."""
    d = PeriodicityDetector()
    (f,) = d.analyze(_periodic(amplitude, seed)).findings
    amp, noise = f.evidence["amplitude_rel"], f.evidence["noise_rel"]
    assert isinstance(amp, float) and isinstance(noise, float) and amp < noise
    assert (amp < d.max_info_amplitude) == (severity is Severity.INFO)
    assert abs(amp - d.max_info_amplitude) < 0.2 * d.max_info_amplitude  # near the edge, on its side
    assert f.severity is severity


# --- LD002: divergence at ``factor`` times the best level ------------------------------------------------


@pytest.mark.parametrize(("share", "diverged"), [(1.05, True), (0.95, False)])
def test_ld002_needs_the_smoothed_loss_factor_times_its_best(share: float, diverged: bool) -> None:
    """A loss that settles at 2.0 and then steps up to just over ``factor`` times that level and stays
    there diverged; just under it, it did not (a level change, other detectors' business)."""
    d = DivergenceDetector()
    loss = np.r_[np.full(600, 2.0), np.full(400, 2.0 * share * d.factor)]
    found = d.analyze(make_run(loss)).findings
    assert bool(found) == diverged


# --- LD101: a loss spike needs both its robust z and its ratio ---------------------------------------------


def _spiky(height: float, seed: int = 3) -> Run:
    rng = np.random.default_rng(seed)
    loss = 2.0 * np.exp(rng.normal(0, 0.02, 1200))
    loss[700] = height
    return make_run(loss)


@pytest.mark.parametrize(("share", "spike"), [(1.05, True), (0.95, False)])
def test_ld101_needs_min_ratio_times_the_local_level(share: float, spike: bool) -> None:
    """A single high loss far beyond the noise (z in the hundreds) is a spike at just over
    ``min_ratio`` times its local level, and none just under it."""
    d = SpikeDetector()
    found = [f for f in d.analyze(_spiky(2.0 * share * d.min_ratio)).findings if f.code == "LD101"]
    assert bool(found) == spike


# --- the batching verdict's table (docs/verdict.md, "Thresholds") -------------------------------------


def _sim_case(strategy: str, batch_fp: bool) -> rules.Case:
    run = as_run(simulate(SimConfig(strategy=strategy, n_samples=4000, seed=11, batch_fp=batch_fp))[0])
    return BatchingDiagnosis().case(run, [])


def _recase(case: rules.Case, f: Facts) -> rules.Case:
    """``case`` with facts ``f``, and what the case derives from them decided again."""
    return dataclasses.replace(case, facts=f, sorted=rules.is_sorted(f, case.t), static=case.t.static(f.rec))


@pytest.mark.parametrize("field", ["lag1", "monotone_frac"])
@pytest.mark.parametrize(("share", "rule"), [(1.01, "sorted"), (0.99, "static")])
def test_sorted_order_needs_min_lag1_and_min_monotone(field: str, share: float, rule: str) -> None:
    """A length-sorted run with its lag-1 correlation (or one-way share) just at or over the sorted
    rule's threshold is sorted; just under it, the order is not sorted and the next rule decides."""
    case = _sim_case("sorted_asc", batch_fp=False)
    assert case.facts.order is not None and rules.decide(case)[0].name == "sorted"
    o = case.facts.order
    order = (
        dataclasses.replace(o, lag1=DEFAULT.min_lag1 * share)
        if field == "lag1"
        else dataclasses.replace(o, monotone_frac=DEFAULT.min_monotone * share)
    )
    assert rules.decide(_recase(case, dataclasses.replace(case.facts, order=order)))[0].name == rule


@pytest.mark.parametrize(("excess", "p_share", "static"), [(1.01, 0.5, True), (0.99, 0.5, False), (1.01, 1.5, False)])
def test_static_needs_min_excess_and_max_p(excess: float, p_share: float, static: bool) -> None:
    """Recurrence just over ``min_excess`` with p under ``max_p`` is static; just under either edge, not."""
    case = _sim_case("static", batch_fp=True)
    assert case.facts.rec is not None and rules.decide(case)[0].name == "static"
    rec = dataclasses.replace(case.facts.rec, excess=DEFAULT.min_excess * excess, p_value=DEFAULT.max_p * p_share)
    assert (rules.decide(_recase(case, dataclasses.replace(case.facts, rec=rec)))[1].batching == "static") == static


@pytest.mark.parametrize(("p_share", "rho_share", "tracks"), [(0.9, 1.1, True), (1.1, 1.1, False), (0.9, 0.9, False)])
def test_the_loss_tracks_length_at_track_p_and_track_rho(p_share: float, rho_share: float, tracks: bool) -> None:
    c = LossLength(
        rho=-lengthstats.TRACK_RHO * rho_share, p_value=lengthstats.TRACK_P * p_share, ci_low=-1.0, ci_high=1.0, n=5000
    )
    assert lengthstats.tracks(c) == tracks


@pytest.mark.parametrize(("share", "match"), [(0.95, True), (1.05, False)])
def test_a_loss_period_matches_the_megabatch_within_its_tolerance(share: float, match: bool) -> None:
    period = megabatch.HF_MEGABATCH * (1 + share * megabatch.TOLERANCE)
    assert (megabatch.match_steps(period, 1.0, None) is not None) == match
    assert (
        megabatch.match_steps(megabatch.HF_MEGABATCH * (1 - share * megabatch.TOLERANCE), 1.0, None) is not None
    ) == match


@pytest.mark.parametrize(("share", "fixed"), [(1.01, True), (0.99, False)])
def test_a_fixed_order_needs_min_z_over_the_shifted_null(share: float, fixed: bool) -> None:
    fo = fixedorder.FixedOrder(
        r=0.5,
        null_mean=0.0,
        null_sd=0.1,
        z=fixedorder.MIN_Z * share,
        p_value=1 / 200,
        pairs=600,
        epoch_pairs=3,
        null_size=199,
    )
    assert fo.fixed == fixed
