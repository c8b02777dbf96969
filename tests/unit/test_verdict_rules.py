"""The batching verdict's rule table: one order, one thresholds object, facts read from the findings."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fixtures.simulator import SimConfig, as_run, simulate
from logdoctor import codes
from logdoctor.config import AnalysisConfig
from logdoctor.diagnosis import rules
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.diagnosis.thresholds import DEFAULT
from logdoctor.pipeline import analyze
from tests.unit.synth import healthy, make_run


def test_the_table_has_one_row_per_name_and_ends_with_a_rule_that_always_applies() -> None:
    names = [r.name for r in rules.RULES]
    assert len(names) == len(set(names)) and names[-1] == "healthy"
    assert all(r.evidence for r in rules.RULES)


@pytest.mark.parametrize(
    ("strategy", "stats", "rule"),
    [
        ("sorted_asc", True, "sorted"),
        ("static", True, "static"),
        ("megabatch", True, "grouped-resets"),
        ("shuffled", True, "healthy"),
        ("shuffled", False, "no-batch-statistics"),
    ],
)
def test_each_rule_gives_the_label_its_row_says(strategy: str, stats: bool, rule: str) -> None:
    cfg = SimConfig(strategy=strategy, n_samples=4000, batch_stats=stats, batch_fp=stats, seed=11)
    d = BatchingDiagnosis().diagnose(as_run(simulate(cfg)[0]), [])
    row = next(r for r in rules.RULES if r.name == d.rule)
    assert d.rule == rule and d.verdict.batching == row.gives


def test_the_thresholds_are_the_configured_ones() -> None:
    """``[batching]`` builds the one thresholds object every rule reads; unset keys keep the defaults."""
    t = BatchingDiagnosis(min_excess=0.3, min_lag1=0.6).thresholds
    assert t == replace(DEFAULT, min_excess=0.3, min_lag1=0.6)


def _grouped_case(min_excess: float = DEFAULT.min_excess) -> rules.Case:
    """Length-grouped megabatches without an epoch column: the epochs are inferred from the resets,
    so whether the windows are recomposed (recurrence below ``min_excess``) decides grouped vs sorted."""
    run = as_run(simulate(SimConfig(strategy="megabatch", n_samples=4000, seed=1, epochs=4))[0], epoch_column=False)
    case = BatchingDiagnosis(min_excess=min_excess).case(run, [])
    assert case.facts.epochs is not None and case.facts.epochs.source.startswith("inferred from batch-length resets")
    return case


def _with_excess(case: rules.Case, excess: float) -> rules.Case:
    rec = case.facts.rec
    assert rec is not None
    # decidable, not significant: never static, so only the recomposition test is at stake
    rec = replace(rec, excess=excess, p_value=0.5, decidable=True)
    return replace(case, facts=replace(case.facts, rec=rec), static=case.t.static(rec))


@pytest.mark.parametrize(("excess", "rule"), [(0.49, "grouped-resets"), (0.5, "sorted"), (0.51, "sorted")])
def test_windows_are_recomposed_below_min_excess_and_fixed_from_it(excess: float, rule: str) -> None:
    """Recurrence just under ``min_excess``: windows recomposed every epoch (grouped); at it and above:
    the same windows every epoch, a fixed sorted order."""
    r, v = rules.decide(_with_excess(_grouped_case(), excess))
    assert r.name == rule and v.batching == ("grouped" if rule == "grouped-resets" else "sorted")


def test_recomposition_follows_the_configured_min_excess() -> None:
    """The grouped rule reads ``min_excess`` as configured, not a copy of its default."""
    case = _grouped_case(min_excess=0.3)
    assert rules.decide(_with_excess(case, 0.29))[0].name == "grouped-resets"
    assert rules.decide(_with_excess(case, 0.4))[0].name == "sorted"


def _ld201(period: float, p_value: float, alpha: float) -> codes.Finding:
    ev = {"period": period, "p_value": p_value, "power_ratio": 0.05, "alpha": alpha}
    return codes.finding(
        "LD201", f"The detrended loss repeats every ~{period} steps.", first_step=1, last_step=1000, evidence=ev
    )


def test_a_megabatch_period_is_read_from_ld201_at_its_configured_alpha() -> None:
    """LD201 reports a period only when its test passes at its configured alpha (here 0.01): the
    verdict takes the finding as it is and never tests the p-value again against a copy of 1e-3."""
    run = make_run(healthy(1000, 1), lr=np.full(1000, 1e-4))
    v = BatchingDiagnosis().diagnose(run, [_ld201(50.0, 5e-3, alpha=0.01)]).verdict
    assert v.batching == "grouped" and v.evidence["megabatch_test"] == "LD201"
    assert BatchingDiagnosis().diagnose(run, []).verdict.batching != "grouped"


@pytest.mark.parametrize(("spe", "megabatch"), [(45, True), (46, False)])
def test_a_period_within_a_tenth_of_the_epoch_is_the_epochs(spe: int, megabatch: bool) -> None:
    """A 50-step LD201 period over 45-step epochs (ratio 1.11) is not the epoch's: a megabatch; over
    46-step epochs (ratio 1.087, within 10%) it is the epoch's, which no megabatch explains."""
    n = 1000
    run = make_run(healthy(n, 2), lr=np.full(n, 1e-4), epoch=np.arange(n) // spe)
    case = BatchingDiagnosis().case(run, [_ld201(50.0, 1e-6, alpha=1e-3)])
    assert (case.facts.other_period is not None) == megabatch and case.facts.period_is_epoch != megabatch


def test_a_configured_periodicity_alpha_reaches_the_verdict_through_ld201() -> None:
    """End to end: the verdict's period evidence is LD201's, whatever alpha it was configured with."""
    table, _ = simulate(SimConfig(strategy="megabatch", n_samples=4000, batch_stats=False, seed=5))
    run = as_run(table)
    for alpha in (1e-3, 1e-2):
        report = analyze(run, AnalysisConfig(options={"periodicity": {"alpha": alpha}}))
        ld201 = [f for f in report.findings if f.code == "LD201"]
        period = report.verdict.evidence.get("period")
        assert (period is not None) == bool(ld201)
        if ld201:
            assert period == ld201[0].evidence["period"] and ld201[0].evidence["alpha"] == alpha
