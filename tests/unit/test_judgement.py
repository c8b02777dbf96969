"""Issue 29: no confident all-clear from the loss alone, no made-up confidence, fixed order from the loss."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from fixtures.simulator import SimConfig, as_run, simulate
from logdoctor import codes, pipeline
from logdoctor.detectors.spikes import SpikeDetector
from logdoctor.diagnosis import facts, fixedorder
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.diagnosis.epochs import Epochs
from logdoctor.diagnosis.thresholds import DEFAULT
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


def _docs() -> str:
    return (Path(__file__).resolve().parents[2] / "docs" / "verdict.md").read_text()


def test_docs_state_the_thresholds_the_code_uses() -> None:
    """One source: the numbers docs/verdict.md gives are the code's (it said z >= 10 while the code used 8)."""
    docs = _docs()
    d = BatchingDiagnosis().thresholds
    assert f"min_lag1={d.min_lag1:g}, min_monotone={d.min_monotone:g}, min_excess={d.min_excess:g}" in docs
    assert f"robust z ≥ {facts.BAD_BATCH_Z_WITH_LENGTHS:g} with usable" in docs
    assert f"z ≥ {facts.BAD_BATCH_Z_LOSS_ONLY:g} from the loss alone" in docs
    assert f"z ≥ {fixedorder.MIN_Z:g} over the shifted-position null" in docs
    assert "`lrschedule.is_cyclic`, the one definition" in docs


def test_gather_reads_the_sorted_thresholds_it_is_given() -> None:
    """facts.py no longer hard-codes 0.5/0.7: epochs are inferred from length resets only when the
    order passes the thresholds the verdict was configured with."""
    cfg = SimConfig(strategy="sorted_asc", n_samples=2500, seed=12)
    run = as_run(simulate(cfg)[0], epoch_column=False)
    inferred = facts.gather(run, []).epochs
    assert inferred is not None and inferred.source.startswith("inferred from batch-length resets")
    strict = facts.gather(run, [], replace(DEFAULT, min_lag1=0.99, min_monotone=0.99)).epochs
    assert strict is None or not strict.source.startswith("inferred from batch-length resets")


def test_one_rise_after_the_peak_is_not_a_cyclic_lr() -> None:
    """Must not: LD602 ("outside a recognisable cyclic schedule") and the cause "a cyclic lr" in one
    report. One rise after the peak is LD602 only; two rises are LD604, and then the verdict may name it."""
    n = 600
    t = np.arange(n)
    one = np.where(t < 30, (t + 1) / 30, np.where((t > 300) & (t < 360), 0.3 + (t - 300) / 60, 0.3))
    rng = np.random.default_rng(4)
    for lr, cyclic in ((one, False), (np.where(t < 30, (t + 1) / 30, 0.2 + 0.8 * (np.cos(t / 40) ** 2)), True)):
        loss = 2 + lr + rng.normal(0, 0.02, n)
        run = _run(pl.DataFrame({"step": t + 1, "loss": loss, "lr": lr * 1e-3}))
        report = pipeline.analyze(run)
        found = {f.code for f in report.findings}
        causes = str(report.verdict.evidence.get("causes") or "")
        assert ("cyclic_lr" in causes) == cyclic and ("LD604" in found) == cyclic, (found, causes)
        assert not ("LD602" in found and "cyclic_lr" in causes)


@pytest.mark.parametrize(
    ("level", "fall", "found"),
    [(np.log(2), 0.0, True), (np.log(2), 0.3, False), (np.log(7), 0.0, False), (0.8, 0.0, False)],
)
def test_loss_at_chance_only_at_ln2_and_never_falling(level: float, fall: float, found: bool) -> None:
    """LD421: a pairwise loss stuck at ln 2 learns nothing; a loss that falls from ln 2, or sits at
    ln 7 (healthy char-LM runs end there) or anywhere else, is not flagged."""
    from logdoctor.detectors.chance import ChanceLossDetector

    n = 200
    rng = np.random.default_rng(7)
    loss = level * (1 - fall * np.arange(n) / n) + rng.normal(0, 0.05, n)
    run = _run(pl.DataFrame({"step": np.arange(1, n + 1), "loss": loss}))
    codes_ = {f.code for f in ChanceLossDetector().analyze(run).findings}
    assert ("LD421" in codes_) == found


def test_silence_on_healthy_runs_plateau_rise_and_floor_spikes() -> None:
    """Must not: a whole-run fall of 10% is not "barely moved" (healthy LoRA SFT and continued
    pretraining runs move that little); a rise the loss recovers from in a run that finished lower is
    information; frequent spikes at a converged loss of 0.002 are information. Must: a 2% fall is
    "barely moved", a rise that stays is a warning, frequent spikes at the loss's own scale warn."""
    from logdoctor.detectors.drops import DropDetector
    from logdoctor.detectors.spikes import SpikeDetector

    n = 1000
    t = np.arange(n)
    rng = np.random.default_rng(11)

    def found(loss: np.ndarray, det: object, code: str) -> set[str]:
        run = _run(pl.DataFrame({"step": t + 1, "loss": loss}))
        return {f.severity.label for f in det.analyze(run).findings if f.code == code}  # type: ignore[attr-defined]

    base = 2.0 * (1 - 0.10 * t / n) + rng.normal(0, 0.01, n)
    assert found(base, DropDetector(), "LD402") == set()
    assert found(2.0 * (1 - 0.02 * t / n) + rng.normal(0, 0.01, n), DropDetector(), "LD402") == {"info"}
    bump = np.where((t > 300) & (t < 450), 0.5, 0.0)
    falling = 3.0 * np.exp(-t / 400) + 1.0 + rng.normal(0, 0.01, n)
    assert found(falling + bump, DropDetector(), "LD403") == {"info"}
    stays = np.where(t > 700, 0.35, 0.0)
    assert found(3.0 * np.exp(-t / 200) + 1.0 + stays + rng.normal(0, 0.01, n), DropDetector(), "LD403") == {"warning"}
    spikes = np.zeros(n)
    spikes[rng.choice(np.arange(50, n - 5), 40, replace=False)] = 1.0
    converged = 2.0 * np.exp(-t / 30) + 0.002 + np.abs(rng.normal(0, 0.0002, n))
    assert found(converged + 0.004 * spikes, SpikeDetector(), "LD103") == {"info"}
    assert found(converged + 0.8 * spikes, SpikeDetector(), "LD103") == {"warning"}


def _grouped_run(seed: int, stats: bool) -> Run:
    """HF group_by_length in miniature: 50-step megabatches sorted longest first, 4 epochs of 500
    steps, a per-token-summed loss that follows length; with or without the batch statistics."""
    rng = np.random.default_rng(seed)
    spe, epochs, mega = 500, 4, 50
    n = spe * epochs
    t = np.arange(n)
    raw = np.exp(rng.normal(5, 0.3, n))
    length = np.concatenate([np.sort(raw[i : i + mega])[::-1] for i in range(0, n, mega)])
    z = (np.log(length) - 5) / 0.3
    loss = (2 + np.exp(-t / 600)) * (1 + 0.12 * z) + rng.normal(0, 0.03, n)
    lr = 1e-4 * np.minimum(1, (t + 1) / 100) * (0.5 + 0.5 * np.cos(np.pi * t / n))
    cols: dict[str, np.ndarray] = {"step": t + 1, "loss": loss, "lr": lr, "epoch": t // spe}
    if stats:
        cols |= {"len_mean": length, "seqs": np.full(n, 8.0), "tokens": 8 * length, "len_max": 1.1 * length}
    return _run(pl.DataFrame(cols))


@pytest.mark.parametrize("stats", [False, True])
def test_megabatch_sawtooth_is_one_finding_with_or_without_statistics(stats: bool) -> None:
    """One symptom, one finding: the sawtooth's level jumps (LD301 "jumps up", ten warnings from the
    loss alone before) and its period (LD201) are folded into the grouped verdict either way."""
    report = pipeline.analyze(_grouped_run(1, stats))
    assert report.verdict.batching == "grouped"
    assert [f.code for f in report.problems] == ["LD505"]
    folded = [f for f in report.findings if f.code in ("LD301", "LD201")]
    assert folded and all(f.evidence.get("explained_by") == "grouped-batching" for f in folded)


@pytest.mark.parametrize("stats", [False, True])
def test_a_resume_is_never_the_cause_of_a_megabatch_period(stats: bool) -> None:
    """A megabatch run that also resumed is grouped (the period's cause), the resume listed beside it;
    it was "not the cause; the problem comes from a resume"."""
    cfg = SimConfig(strategy="megabatch", confounder="resume", n_samples=6000, batch_stats=stats, seed=2)
    table, truth = simulate(cfg)
    v = pipeline.analyze(as_run(table)).verdict
    assert v.batching == "grouped" and "resume" in str(v.evidence["causes"])
    assert truth["expected_verdict"] == ("grouped" if stats else "inconclusive")  # the simulator's rule


@pytest.mark.parametrize(("train_end", "found"), [(98.6, True), (82.0, False)])
def test_memorisation_from_accuracy_needs_a_fivefold_error_gap(train_end: float, found: bool) -> None:
    """Flat eval accuracy at 80 with training accuracy at 98.6 (14x fewer errors) is memorisation;
    at 82 (1.1x, as healthy real runs) it is not, whatever the loss did."""
    from logdoctor.detectors.memorization import MemorizationDetector

    n = 100
    t = np.arange(1, n + 1) * 50
    acc = np.minimum(train_end, 20 + (train_end - 20) * np.arange(n) / 40)
    loss = 3.0 * np.exp(-np.arange(n) / 30) + 0.3
    tb = pl.DataFrame({"step": t, "loss": loss, "acc": acc}).with_row_index("line_no", offset=1)
    tb = tb.with_columns(pl.col("line_no").cast(pl.Int64))
    ev_steps = np.arange(500, 5001, 500)
    ev_acc = [48.0, 60.0, 77.5, 79.0, 79.8, 79.9, 80.2, 80.2, 80.2, 80.2]
    evals = pl.DataFrame({"step": ev_steps, "line_no": ev_steps // 50, "validation_accuracy": ev_acc})
    run = Run(validate_run(tb), RunMeta("-", "test"), evals)
    codes_ = {f.code for f in MemorizationDetector().analyze(run).findings}
    assert ("LD411" in codes_) == found


def _gn_run(bad_rows: list[int], n: int = 600) -> Run:
    t = np.arange(1, n + 1)
    gn = np.full(n, 1.0)
    gn[bad_rows] = np.nan
    return _run(pl.DataFrame({"step": t, "loss": 3 * np.exp(-t / 200) + 1, "grad_norm": gn}))


def test_nonfinite_grad_norm_with_a_finite_loss_is_reported_against_the_fp16_null() -> None:
    """LD011: 40 NaN grad norms over 500 settled steps (null: ~5) warn; 3 are a scaler at work (info);
    none is silent."""
    from logdoctor.detectors.nonfinitemetrics import NonFiniteMetricsDetector

    def sev(rows: list[int]) -> set[str]:
        return {f.severity.label for f in NonFiniteMetricsDetector().analyze(_gn_run(rows)).findings}

    assert sev(list(range(150, 590, 11))) == {"warning"}
    assert sev([10, 300, 450]) == {"info"}
    assert sev([]) == set()


def test_infinite_eval_loss_is_an_error_unless_it_recovered_or_follows_a_nan_loss() -> None:
    from logdoctor.detectors.evalnonfinite import EvalNonFiniteDetector

    n = 300
    t = np.arange(1, n + 1)
    base = pl.DataFrame({"step": t, "loss": 3 * np.exp(-t / 100) + 1})
    ev_steps = np.arange(50, 301, 50)
    inf = np.inf
    for values, want in (([2.0, 2.0, 2.0, inf, inf, inf], "error"), ([2.0, inf, 2.0, 2.0, 2.0, 2.0], "warning")):
        evals = pl.DataFrame({"step": ev_steps, "line_no": ev_steps, "eval_loss": values})
        run = Run(_run(base).table, RunMeta("-", "test"), evals)
        (f,) = EvalNonFiniteDetector().analyze(run).findings
        assert (f.code, f.severity.label) == ("LD009", want)
    nan = float("nan")
    nan_loss = base.with_columns(pl.when(pl.col("step") > 100).then(nan).otherwise(pl.col("loss")).alias("loss"))
    evals = pl.DataFrame({"step": ev_steps, "line_no": ev_steps, "eval_loss": [2.0, 2.0, nan, nan, nan, nan]})
    (f,) = EvalNonFiniteDetector().analyze(Run(_run(nan_loss).table, RunMeta("-", "test"), evals)).findings
    assert f.severity.label == "info" and f.evidence["follows_nonfinite_loss"] is True


@pytest.mark.parametrize("fixed", [True, False])
def test_static_with_statistics_says_whether_the_order_repeats(fixed: bool) -> None:
    """Batches built once (the same fingerprints every epoch): fed in the same order, the verdict
    says so; shuffled, it says only their order is shuffled."""
    rng = np.random.default_rng(5)
    spe, epochs = 120, 4
    lengths = rng.integers(20, 400, spe).astype(float)
    order = [np.arange(spe) if fixed else rng.permutation(spe) for _ in range(epochs)]
    idx = np.concatenate(order)
    n = idx.size
    t = np.arange(n)
    table = pl.DataFrame(
        {
            "step": t + 1,
            "loss": 2 + np.exp(-t / 200) + rng.normal(0, 0.05, n),
            "epoch": t // spe,
            "batch_fp": [f"fp{i:04d}" for i in idx],
            "seqs": np.full(n, 8.0),
            "tokens": 8 * lengths[idx],
            "len_mean": lengths[idx],
            "lr": np.full(n, 1e-4),
        }
    )
    v = pipeline.analyze(_run(table)).verdict
    assert v.batching == "static"
    assert ("in the same order every epoch" in v.summary) == fixed
    assert ("only their order is shuffled" in v.summary) == (not fixed)


@pytest.mark.parametrize("name", ["loop_fixed_stats", "loop_fixed_loss"])
def test_real_fixed_order_training_is_static_with_one_problem(name: str) -> None:
    """A real training (bench/realruns/train.py, strategy `fixed`: batches shuffled and built once,
    fed in the same order every epoch): static from the statistics and from the loss alone (r 0.97),
    and its loss period at an epoch harmonic is that order, folded: one problem, LD502."""
    path = Path(__file__).resolve().parents[2] / "fixtures" / "realruns" / f"{name}.log"
    report = pipeline.analyze(pipeline.load(str(path)))
    assert report.verdict.batching == "static" and "same order every epoch" in report.verdict.summary
    assert [f.code for f in report.problems] == ["LD502"]


@pytest.mark.parametrize("name", ["hf_gbl_loss_resumed", "hf_gbl_stats_resumed"])
def test_real_group_by_length_run_that_resumed_is_grouped_not_a_resume(name: str) -> None:
    """A real HF Trainer group_by_length run that died at step 290 and resumed from checkpoint-260
    (steps 261-290 written twice): grouped, the resume listed beside it; before issue 29 the
    loss-only log was "not a batching problem (99%)", the problem coming from the resume."""
    path = Path(__file__).resolve().parents[2] / "fixtures" / "realruns" / f"{name}.log"
    report = pipeline.analyze(pipeline.load(str(path)))
    assert report.series.resumes == 1 and report.verdict.batching == "grouped"
    assert "resume" in str(report.verdict.evidence["causes"])
    assert [f.code for f in report.problems] == ["LD505"]


def test_fixed_order_work_is_bounded_on_huge_logs() -> None:
    """20,000 epochs of 50 rows, or 10 epochs of 100k rows: only the first MAX_EPOCH_PAIRS + 1
    epochs, each cut to MAX_POSITIONS rows, are read (the loops were O(rows x epochs): 44 s at 1M rows)."""
    for spe in (50, 100_000):
        idx = np.arange(1_000_000) // spe
        slices = fixedorder.epoch_slices(idx)
        assert len(slices) == fixedorder.MAX_EPOCH_PAIRS + 1
        assert all(0 < b - a <= fixedorder.MAX_POSITIONS and idx[a] == idx[b - 1] for a, b in slices)
