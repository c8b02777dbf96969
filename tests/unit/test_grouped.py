"""The `grouped` verdict: HF group_by_length megabatches from batch statistics or from the loss alone,
aliasing by the logging interval, and the must-nots (noise, shuffles are never grouped)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from logdoctor.diagnosis import megabatch as mb
from logdoctor.pipeline import analyze, load
from tests.unit.synth import make_run


def hf_grouped_run(steps: int, k: int, seed: int, *, grouped: bool = True, effect: float = 0.3):
    """A loss logged every ``k`` optimizer steps (the mean over them, as HF logs it) from
    LengthGroupedSampler batches: random megabatches of 50 batches, each sorted longest first,
    recomposed every epoch; the loss rises with batch length. ``grouped=False``: random order."""
    rng = np.random.default_rng(seed)
    n_batches_epoch = 1000
    lengths = []
    for _ in range(-(-steps // n_batches_epoch)):
        per_batch = rng.lognormal(5, 0.6, n_batches_epoch)  # mean length of each batch
        if grouped:
            mega = [np.sort(m)[::-1] for m in np.array_split(rng.permutation(per_batch), 20)]
            per_batch = np.concatenate(mega)
        lengths.append(per_batch)
    x = np.log(np.concatenate(lengths)[:steps])
    t = np.arange(steps)
    lr = np.minimum(1, (t + 1) / 200) * 0.5 * (1 + np.cos(np.pi * t / steps))
    loss = 2 + 3 * np.exp(-t / 2000) + effect * (x - x.mean()) / x.std() + rng.normal(0, 0.1, steps)
    rows = steps // k
    mean = loss[: rows * k].reshape(rows, k).mean(axis=1)
    return make_run(mean, steps=(np.arange(rows) + 1) * k, lr=lr[k - 1 :: k][:rows])


@pytest.mark.parametrize("k", [1, 5, 10])
def test_loss_only_megabatch_period_is_grouped(k: int) -> None:
    v = analyze(hf_grouped_run(6000, k, seed=k)).verdict
    assert v is not None and v.batching == "grouped", v.summary
    assert abs(float(v.evidence["megabatch_period"]) - 50) <= 5  # type: ignore[arg-type]
    assert "mega_batch_mult=50" in str(v.evidence["megabatch_sampler"])


def test_an_aliased_period_is_recognised() -> None:
    v = analyze(hf_grouped_run(12000, 30, seed=3)).verdict  # 50-step period seen every 30 steps
    assert v is not None and v.batching == "grouped", v.summary
    assert v.evidence["megabatch_aliased"] is True
    assert abs(float(v.evidence["megabatch_period"]) - 75) <= 7.5  # type: ignore[arg-type]


def test_a_period_averaged_away_is_inconclusive_with_the_reason() -> None:
    v = analyze(hf_grouped_run(20000, 100, seed=4)).verdict
    assert v is not None and v.batching == "inconclusive"
    assert "averages a 50-step length-grouped megabatch period away" in v.summary


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 10])
def test_random_order_is_never_grouped(seed: int, k: int) -> None:
    v = analyze(hf_grouped_run(6000, k, seed=100 + seed, grouped=False)).verdict
    assert v is not None and v.batching != "grouped", v.summary


@pytest.mark.parametrize("seed", range(4))
def test_white_and_red_noise_are_never_grouped(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 5000
    t = np.arange(n)
    white = 2 + np.exp(-t / 1000) + rng.normal(0, 0.1, n)
    red = np.zeros(n)
    for i in range(1, n):
        red[i] = 0.9 * red[i - 1] + rng.normal(0, 0.05)
    lr = np.minimum(1, (t + 1) / 200)
    for loss in (white, white + red):
        v = analyze(make_run(loss, lr=lr)).verdict
        assert v is not None and v.batching != "grouped", v.summary


@pytest.mark.parametrize(
    ("m", "k", "expected"), [(50, 1, 50.0), (50, 10, 50.0), (50, 30, 75.0), (50, 60, 300.0), (50, 100, None)]
)
def test_logged_period_aliases(m: int, k: int, expected: float | None) -> None:
    got = mb.logged_period(m, k)
    assert got == expected if expected is None else got is not None and abs(got - expected) < 1e-9


@pytest.mark.reallogs
@pytest.mark.parametrize(
    "name",
    [
        "wav2vec2_xlsr_ar_clean_gbl_true_stdout.txt",
        "wav2vec2_xlsr_ar_aug20gaus_gbl_true_stdout.txt",
        "wav2vec2_xlsr_tr_clean_gbl_true_oom_restart_stdout.txt",
    ],
)
def test_real_hf_group_by_length_runs_are_grouped(reallogs_dir: Path, name: str) -> None:
    report = analyze(load(str(reallogs_dir / name)))
    v = report.verdict
    assert v is not None and v.batching == "grouped", v.summary
    # the structure stage places the rows on the optimizer-step axis (10 steps per logged row), so
    # the period is read in steps and no logging stride has to be assumed any more
    assert v.evidence["megabatch_steps"] == 50 and "megabatch_stride_assumed" not in v.evidence
    assert "logged rows" not in v.summary
    assert "LengthGroupedSampler" in str(v.evidence["megabatch_sampler"])
    assert {f.code: f.severity.label for f in report.findings}.get("LD505") == "warning"


@pytest.mark.reallogs
@pytest.mark.parametrize(
    "name",
    [
        "llamafactory_codeup_sft_math_trainer_state_gbl_false.json",
        "hf_trl_trainer_state_mistral7b_medical_gbl_false.json",
    ],
)
def test_real_runs_without_group_by_length_are_not_grouped(reallogs_dir: Path, name: str) -> None:
    v = analyze(load(str(reallogs_dir / name))).verdict
    assert v is not None and v.batching not in ("grouped", "sorted", "static"), v.summary
