"""Issue 29: no confident all-clear from the loss alone, no made-up confidence, fixed order from the loss."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from fixtures.simulator import SimConfig, as_run, simulate
from logdoctor import codes, pipeline
from logdoctor.detectors.spikes import SpikeDetector
from logdoctor.diagnosis import fixedorder
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.diagnosis.epochs import Epochs
from logdoctor.exitcodes import gated_findings
from logdoctor.model import Run, RunMeta, RunPart, Verdict, validate_run


def test_only_an_inconclusive_verdict_may_have_no_confidence() -> None:
    assert Verdict("inconclusive", None, "c", "s").confidence_text == "undecided"
    with pytest.raises(ValueError, match="needs a confidence"):
        Verdict("healthy", None, "c", "s")


def _fixed_order_loss(seed: int, fixed: bool, epochs: int = 4, spe: int = 150) -> pl.DataFrame:
    """A decaying loss plus a per-batch offset (batches built once: the same offsets every epoch),
    fed in the same order (``fixed``) or reshuffled every epoch; noise on top."""
    rng = np.random.default_rng(seed)
    offsets = rng.normal(0, 0.3, spe)  # each pre-built batch's own difficulty
    order = [np.arange(spe) if fixed else rng.permutation(spe) for _ in range(epochs)]
    n = epochs * spe
    t = np.arange(n)
    loss = 2 + np.exp(-t / 200) + np.concatenate([offsets[o] for o in order]) + rng.normal(0, 0.1, n)
    return pl.DataFrame({"step": t + 1, "loss": loss, "epoch": t // spe, "lr": np.full(n, 1e-4)})


def _run(table: pl.DataFrame) -> Run:
    t = table.with_row_index("line_no", offset=1).with_columns(pl.col("line_no").cast(pl.Int64))
    return Run(validate_run(t), RunMeta("-", "test"))


def test_fixed_order_is_seen_in_the_loss_alone_and_named_static() -> None:
    run = _run(_fixed_order_loss(1, fixed=True))
    v = pipeline.analyze(run).verdict
    assert v.batching == "static" and "same order every epoch" in v.summary
    assert isinstance(v.evidence["fixed_order_r"], float) and v.evidence["fixed_order_r"] >= 0.8


def test_reshuffled_batches_never_look_fixed_under_the_shifted_null() -> None:
    """Must not: 60 runs whose batch order is reshuffled every epoch (the same batches: static
    composition, shuffled order) are never called fixed; the test's z stays well inside its null."""
    zs = []
    for seed in range(60):
        table = _fixed_order_loss(100 + seed, fixed=False)
        idx = table["epoch"].to_numpy()
        ep = Epochs(idx, tuple(int(s) for s in np.flatnonzero(np.r_[True, np.diff(idx) != 0]) + 1), 150, "epoch column")
        fo = fixedorder.fixed_order(table["step"].to_numpy(), table["loss"].to_numpy(), ep)
        assert fo is not None and not fo.fixed
        zs.append(fo.z)
    assert max(zs) < fixedorder.MIN_Z and abs(float(np.mean(zs))) < 0.5


def test_loss_only_spikes_are_inconclusive_and_say_what_was_ruled_out() -> None:
    """A loss-only run with isolated bad batches: the spikes may be long batches, so no all-clear;
    no confidence; the summary says what the loss ruled out and what to log. With batch
    statistics (random order), the same spikes clear batching."""
    cfg = SimConfig(strategy="bucketed", confounder="bad_batches", n_samples=2500, batch_stats=False, seed=31)
    run = as_run(simulate(cfg)[0])
    v = BatchingDiagnosis().diagnose(run, SpikeDetector().analyze(run).findings).verdict
    assert v.batching == "inconclusive" and v.confidence is None
    assert "the loss rules out a length sort renewed every epoch" in v.summary and "to decide" in v.summary
    cfg = SimConfig(strategy="bucketed", confounder="bad_batches", n_samples=2500, batch_stats=True, seed=31)
    run = as_run(simulate(cfg)[0])
    v = BatchingDiagnosis().diagnose(run, SpikeDetector().analyze(run).findings).verdict
    assert v.batching == "not_batching" and v.confidence is not None and v.confidence > 0.5


def test_a_cause_only_information_backs_is_not_called_the_loss_problem() -> None:
    """A resume (LD003, info) is no fault: the verdict says the loss shows it, never that "the
    loss problem comes from" it (which would contradict an "ok" headline)."""
    n = 400
    rng = np.random.default_rng(3)
    table = pl.DataFrame({"step": np.arange(1, n + 1), "loss": 2 + rng.normal(0, 0.05, n)})
    run = _run(table)
    resume = codes.finding("LD003", "resumed", first_step=200, last_step=200, confidence=0.9)
    v = BatchingDiagnosis().diagnose(run, [resume]).verdict
    assert v.batching == "not_batching" and "loss problem" not in v.summary and v.summary.startswith("The loss shows")


def test_check_gates_on_every_appended_run_unless_told_last() -> None:
    report = pipeline.analyze(_run(_fixed_order_loss(2, fixed=False)))
    bad = codes.finding("LD002", "diverged", first_step=5, last_step=9)
    part = RunPart(1, 2, 1, 9, 1, 9, 9, "error", (bad,))
    report = type(report)(report.run, report.series, report.verdict, report.findings, runs=(part,))
    assert bad in gated_findings(report) and bad not in gated_findings(report, "last")
    assert report.status == "error" and report.run_status != "error"
    with pytest.raises(ValueError):
        gated_findings(report, "first")
