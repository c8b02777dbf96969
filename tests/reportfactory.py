"""Hand-built Reports for renderer tests: one per verdict kind, an empty one and a one-step run.

The runs are seeded synthetic tables shaped like each fault; findings, evidence and artifacts are
written by hand as the detectors would (renderers must draw them, never compute them).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from logdoctor import codes, pipeline
from logdoctor.model import (
    Artifacts,
    Finding,
    Report,
    Run,
    RunMeta,
    Severity,
    Verdict,
    validate_run,
)
from logdoctor.pipeline import summarize

EPOCH_STEPS = 200


def _run(path: str, cols: dict[str, np.ndarray], **meta: object) -> Run:
    n = len(cols["loss"])
    data = {"step": np.arange(1, n + 1), "line_no": np.arange(1, n + 1) * 2 + 5, **cols}
    return Run(
        table=validate_run(pl.DataFrame(data)),
        meta=RunMeta(path=path, format="text", lines_read=2 * n + 6, lines_skipped=n + 6, **meta),
    )  # type: ignore[arg-type]


def _periodogram(loss: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]]:
    x = loss - np.polyval(np.polyfit(np.arange(loss.size), loss, 2), np.arange(loss.size))
    power = np.abs(np.fft.rfft(x)) ** 2
    k = np.arange(2, power.size)
    return tuple(float(v) for v in loss.size / k), tuple(float(v) for v in power[2:])


def _report(run: Run, verdict: Verdict, findings: list[Finding], **artifacts: object) -> Report:
    findings.sort(key=lambda f: (-f.severity, f.first_step if f.first_step is not None else -1, f.code))
    return Report(
        run=run,
        series=summarize(run),
        verdict=verdict,
        findings=tuple(findings),
        artifacts=Artifacts(**artifacts),
        checks=pipeline.analyze(run).checks,  # what the analysis could check of this run
    )  # type: ignore[arg-type]


def sorted_report() -> Report:
    """Length-sorted batches: loss sawtooth with the epoch as period, tracking batch length."""
    rng = np.random.default_rng(1)
    n = 3 * EPOCH_STEPS
    pos = (np.arange(n) % EPOCH_STEPS) / EPOCH_STEPS
    length = 80 + 900 * pos + rng.normal(0, 15, n)
    loss = 2.0 + 0.8 * np.exp(-np.arange(n) / 400) + 0.6 * pos + rng.normal(0, 0.04, n)
    loss[411] += 2.5
    run = _run(
        "runs/sorted.log",
        {"loss": loss, "len_mean": length, "epoch": np.arange(n) / EPOCH_STEPS},
        steps_per_epoch=EPOCH_STEPS,
    )
    per, pw = _periodogram(loss)
    findings = [
        codes.finding(
            "LD501",
            "Batches arrive in length order within every epoch and the loss follows the length.",
            confidence=0.95,
            evidence={
                "loss_length_rho": 0.82,
                "loss_length_p": 3.1e-14,
                "lag1_len_mean": 0.99,
                "monotone_frac": 1.0,
            },
        ),
        codes.finding(
            "LD202",
            "The loss rises through each epoch and drops at every boundary (period 200 steps).",
            confidence=0.9,
            first_step=1,
            last_step=n,
            evidence={"period": 200, "steps_per_epoch": 200, "power_ratio": 41.5},
        ),
        codes.finding(
            "LD101",
            "Loss spike at step 412: 4.93, 2.05x the local median of 2.41.",
            first_step=412,
            last_step=412,
            line=829,
            confidence=0.99,
            evidence={"robust_z": 9.3, "loss": 4.93, "local_median": 2.41},
        ),
    ]
    verdict = Verdict(
        "sorted",
        0.93,
        "length-sorted batches",
        "Batches are fed sorted by length: the loss saw-tooths with the epoch and tracks length.",
        "Shuffle each epoch; a bucketed shuffle keeps the padding savings.",
        {"loss_length_rho": 0.82, "loss_length_p": 3.1e-14, "period": 200, "steps_per_epoch": 200},
    )
    return _report(
        run,
        verdict,
        findings,
        periodogram_period=per,
        periodogram_power=pw,
        period=200.0,
        spike_steps=(412,),
        epoch_boundaries=(201, 401),
    )


def static_report() -> Report:
    """Static composition: the same batches every epoch, only their order shuffled."""
    rng = np.random.default_rng(2)
    base = rng.uniform(100, 900, EPOCH_STEPS)
    length = np.concatenate([rng.permutation(base) for _ in range(4)])
    n = length.size
    loss = 2.8 * np.exp(-np.arange(n) / 1500) + 0.0006 * (length - 500) + rng.normal(0, 0.03, n)
    run = _run(
        "runs/static.log",
        {"loss": loss, "len_mean": length, "epoch": np.arange(n) / EPOCH_STEPS},
        steps_per_epoch=EPOCH_STEPS,
    )
    findings = [
        codes.finding(
            "LD502",
            "97% of batch signatures from epoch 1 recur in every later epoch, in a shuffled order.",
            confidence=0.9,
            first_step=201,
            last_step=n,
            evidence={"recurrence_fraction": 0.92, "recurrence_chance": 0.03, "epochs_compared": 3},
        ),
        codes.finding(
            "LD503",
            "The loss follows batch length (expected with length-homogeneous batches).",
            confidence=0.8,
            evidence={"loss_length_rho": 0.58, "loss_length_p": 2e-70},
        ),
    ]
    verdict = Verdict(
        "static",
        0.88,
        "static batch composition",
        "The same batches recur every epoch; only their order changes.",
        "Re-form batches every epoch: shuffle within length buckets, batch, shuffle batches.",
        {"recurrence_fraction": 0.92, "recurrence_chance": 0.03},
    )
    return _report(
        run,
        verdict,
        findings,
        recurrence_by_epoch=(0.0, 0.97, 0.96, 0.98),
        epoch_boundaries=(201, 401, 601),
    )


def healthy_report() -> Report:
    """Bucketed shuffle: loss tracks length, but compositions never recur."""
    rng = np.random.default_rng(3)
    n = 3 * EPOCH_STEPS
    length = rng.choice([128.0, 256.0, 512.0, 1024.0], n) + rng.normal(0, 10, n)
    loss = 2.5 * np.exp(-np.arange(n) / 700) + 0.0004 * length + rng.normal(0, 0.03, n)
    acc = 0.9 - 0.6 * np.exp(-np.arange(n) / 500) + rng.normal(0, 0.01, n)
    run = _run(
        "runs/healthy.log",
        {"loss": loss, "acc": acc, "len_mean": length, "epoch": np.arange(n) / EPOCH_STEPS},
        steps_per_epoch=EPOCH_STEPS,
    )
    findings = [
        codes.finding(
            "LD503",
            "The loss follows batch length (expected with length-homogeneous batches).",
            confidence=0.85,
            evidence={"loss_length_rho": 0.61, "loss_length_p": 1e-60},
        )
    ]
    verdict = Verdict(
        "healthy",
        0.9,
        "bucketed shuffle",
        "Loss tracks batch length, but batch order and composition change every epoch.",
        "",
        {"lag1_len_mean": 0.02, "recurrence_fraction": 0.0, "loss_length_rho": 0.61},
    )
    return _report(run, verdict, findings, recurrence_by_epoch=(0.0, 0.0, 0.01), epoch_boundaries=(201, 401))


def not_batching_report() -> Report:
    """A cyclic lr schedule and an instability: periodic loss, but not batching's doing."""
    rng = np.random.default_rng(4)
    n = 900
    t = np.arange(n)
    lr = 1e-3 * (0.55 + 0.45 * np.cos(2 * np.pi * t / 150))
    loss = 0.9 + 1.3 * np.exp(-t / 400) + 150 * (lr - 1e-3) + rng.normal(0, 0.04, n)
    loss[600:] += 0.35
    loss[640] += 3.0
    grad = np.abs(rng.normal(1, 0.1, n))
    grad[640] = 14.0
    run = _run("runs/cyclic_lr.log", {"loss": loss, "lr": lr, "grad_norm": grad})
    per, pw = _periodogram(loss)
    findings = [
        codes.finding(
            "LD201",
            "The detrended loss repeats every 150 steps, in step with the learning rate.",
            first_step=1,
            last_step=n,
            confidence=0.9,
            evidence={
                "period": 150,
                "lr_rerise": 0.8,
                "power_ratio": 25.0,
                "p_value": 4e-6,
            },
        ),
        codes.finding(
            "LD102",
            "Gradient norm 14 at step 641 with a loss spike: optimisation instability.",
            first_step=641,
            last_step=641,
            line=1287,
            evidence={"grad_norm_z": 38.2, "robust_z": 12.4},
        ),
        codes.finding(
            "LD101",
            "Loss spike at step 641: 5.0, 2.63x the local median of 1.9.",
            first_step=641,
            last_step=641,
            line=1287,
            evidence={"robust_z": 12.4, "loss": 5.0, "local_median": 1.9},
        ),
        codes.finding(
            "LD301",
            "The loss level moves from 1.35 to 1.62 at step 601.",
            first_step=601,
            last_step=601,
            line=1207,
            confidence=0.8,
            evidence={"level_before": 1.35, "level_after": 1.62},
        ),
    ]
    verdict = Verdict(
        "not_batching",
        0.8,
        "cyclic learning-rate schedule",
        "The loss period matches the lr schedule, not the epoch; no batch statistic points at batching.",
        "Nothing to change in the data pipeline; check the instability at step 641.",
        {"lr_rerise": 0.8, "loss_lr_rho": 0.91},
    )
    return _report(
        run,
        verdict,
        findings,
        periodogram_period=per,
        periodogram_power=pw,
        period=150.0,
        changepoints=(601,),
        spike_steps=(641,),
    )


def inconclusive_report() -> Report:
    """No batch statistics, a resume and NaN losses: the batching question cannot be answered."""
    rng = np.random.default_rng(5)
    n = 400
    loss = 3.0 * np.exp(-np.arange(n) / 300) + rng.normal(0, 0.05, n)
    loss[380:383] = np.nan
    run = _run("runs/no_stats.log", {"loss": loss}, resumes=1, resume_steps=(251,), overwritten_steps=20)
    findings = [
        codes.finding(
            "LD001",
            "Loss is NaN at 3 steps, the first at step 381.",
            first_step=381,
            last_step=383,
            line=767,
            evidence={"nonfinite_steps": 3, "first_nonfinite_step": 381},
        ),
        codes.finding(
            "LD003",
            "The run restarted at step 251 after reaching step 270; 20 steps were re-logged.",
            first_step=251,
            last_step=270,
            line=511,
            evidence={"resume_step": 251, "overwritten_steps": 20},
        ),
        codes.finding(
            "LD504",
            "No per-batch length statistics or batch fingerprints in this log.",
            evidence={"has_length_stats": False, "has_batch_fp": False},
        ),
    ]
    verdict = Verdict(
        "inconclusive",
        None,
        "no batch statistics in the log",
        "The log lacks per-batch statistics, so batching cannot be judged.",
        "Log per-batch seqs, tokens, len_min/len_mean/len_max and a batch fingerprint.",
    )
    return _report(run, verdict, findings)


def empty_report() -> Report:
    """A short clean run with no findings at all."""
    loss = 2.0 - 0.01 * np.arange(50)
    run = _run("runs/clean.log", {"loss": loss})
    verdict = Verdict("inconclusive", 0.0, "nothing to judge", "No findings and no batch statistics.")
    return _report(run, verdict, [])


def one_step_report() -> Report:
    """A run that logged a single step."""
    run = _run("runs/one_step.log", {"loss": np.array([4.6]), "len_mean": np.array([658.7])})
    findings = [
        codes.finding(
            "LD006",
            "Only 1 step: periodicity, changepoints and batching need more.",
            evidence={"steps": 1, "min_steps": 64},
        )
    ]
    verdict = Verdict("inconclusive", 0.0, "too few steps", "One step is too few to judge batching.")
    return _report(run, verdict, findings)


REPORTS: dict[str, Callable[[], Report]] = {
    "sorted": sorted_report,
    "static": static_report,
    "healthy": healthy_report,
    "not_batching": not_batching_report,
    "inconclusive": inconclusive_report,
    "empty": empty_report,
    "one_step": one_step_report,
}

SEVERITIES = tuple(Severity)
