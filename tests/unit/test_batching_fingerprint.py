"""Batch fingerprints make static composition a certainty, and rule it out when they never recur."""

from __future__ import annotations

import polars as pl

from fixtures.simulator import SimConfig, as_run, simulate
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.model import Verdict


def verdict(cfg: SimConfig, mangle: bool = False, drop_stats: bool = False) -> Verdict:
    table, _ = simulate(cfg)
    if mangle:  # a parser that kept only the leading digit of each hex fingerprint
        table = table.with_columns(pl.col("batch_fp").str.slice(0, 1))
    if drop_stats:
        table = table.drop("seqs", "tokens", "len_mean", "len_min", "len_max", "pad_frac")
    return BatchingDiagnosis().diagnose(as_run(table), []).verdict


def test_recurring_fingerprints_make_static_certain_with_the_exact_fraction() -> None:
    v = verdict(SimConfig(strategy="static", n_samples=2500, batch_fp=True, seed=51))
    assert v.batching == "static" and v.confidence >= 0.99
    assert v.evidence["recurrence_kind"] == "fingerprint"
    assert v.evidence["recurrence_fraction"] == 1.0 and v.evidence["recurrence_chance"] == 0.0
    assert "100% of batch fingerprints" in v.summary


def test_fingerprints_alone_suffice_for_static() -> None:
    v = verdict(SimConfig(strategy="static", n_samples=2500, batch_fp=True, seed=52), drop_stats=True)
    assert v.batching == "static" and v.evidence["recurrence_kind"] == "fingerprint"


def test_fingerprints_that_never_recur_rule_static_out() -> None:
    v = verdict(SimConfig(strategy="bucketed", n_samples=2500, batch_fp=True, seed=53))
    assert v.batching == "healthy"
    assert v.evidence["recurrence_fraction"] == 0.0 and v.evidence["recurrence_kind"] == "fingerprint"


def test_mangled_fingerprints_fall_back_to_signatures() -> None:
    v = verdict(SimConfig(strategy="bucketed", n_samples=2500, batch_fp=True, seed=54), mangle=True)
    assert v.batching == "healthy"
    assert v.evidence["recurrence_kind"] == "signature"


def test_fingerprints_under_sparse_logging_compare_with_the_expected_fraction() -> None:
    v = verdict(SimConfig(strategy="static", n_samples=8000, epochs=5, log_every=4, batch_fp=True, seed=55))
    ev = v.evidence
    assert v.batching == "static"
    assert abs(ev["recurrence_fraction"] - ev["recurrence_expected_if_static"]) < 0.1  # type: ignore[operator]
