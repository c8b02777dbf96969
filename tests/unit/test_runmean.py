"""Running means since the epoch began (Keras progress bars): found, read back, never invented."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.errors import LogdoctorError
from logdoctor.structure import runmean
from tests.reports import report_of

EPOCHS, PER_EPOCH = 6, 200


def _per_batch(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = EPOCHS * PER_EPOCH
    return 0.5 + 2.0 * np.exp(-np.arange(n) / 300) + 0.15 * rng.standard_normal(n)


def _running(loss: np.ndarray) -> np.ndarray:
    k = np.tile(np.arange(1, PER_EPOCH + 1), EPOCHS).astype(float)
    csum = np.cumsum(loss.reshape(EPOCHS, PER_EPOCH), axis=1).ravel()
    return csum / k


def _table(values: np.ndarray, every: int = 1, counter: bool = True) -> pl.DataFrame:
    k = np.tile(np.arange(1, PER_EPOCH + 1), EPOCHS)
    cols = {
        "step": np.arange(1, values.size + 1),
        "loss": values,
        "epoch": np.repeat(np.arange(EPOCHS), PER_EPOCH).astype(float),
    }
    if counter:
        cols["batches"] = k.astype(float)
    keep = (k % every == 0) | (k == 1)
    return pl.DataFrame(cols).filter(pl.Series(keep))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(("every", "counter"), [(1, True), (3, True), (1, False), (5, False)])
def test_running_means_are_found_and_read_back(seed: int, every: int, counter: bool) -> None:
    raw = _per_batch(seed)
    t = _table(np.round(_running(raw), 4), every, counter)  # printed to 4 decimals, as Keras does
    notes: list[str] = []
    back, found = runmean.deaverage(t, notes)
    assert found is not None and found.columns == ("loss",) and found.slopes[0] < -0.8
    # each row is now the mean over the batches since the row before: compare with the truth
    k = t["batches"].to_numpy() if counter else runmean.position(t)
    assert k is not None
    step = t["step"].to_numpy()
    prev = np.r_[0, step[:-1]]
    first = np.r_[True, k[1:] <= k[:-1]]  # an epoch's first row: its mean since the epoch began
    rows = zip(step, prev, k, first, strict=True)
    truth = np.array([raw[s - int(kk) if f else p : s].mean() for s, p, kk, f in rows])
    # 4-decimal rounding grows by (k + j) / gap when undone: at most 400 x 5e-5 = 0.02 here
    assert np.max(np.abs(back["loss"].to_numpy() - truth)) < 0.025
    assert np.median(np.abs(back["loss"].to_numpy() - truth)) < 0.01
    assert "running means" in notes[0]


def test_the_read_back_is_exact_without_rounding() -> None:
    raw = _per_batch(7)
    back, found = runmean.deaverage(_table(_running(raw)), [])
    assert found is not None
    np.testing.assert_allclose(back["loss"].to_numpy(), raw, atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_per_batch_and_smoothed_losses_are_left_alone(seed: int) -> None:
    raw = _per_batch(seed)
    ema = pl.Series(raw).ewm_mean(alpha=0.05).to_numpy()  # smoothed, never reset at the epoch
    for values in (raw, ema, np.round(raw, 2)):
        t = _table(values)
        back, found = runmean.deaverage(t, notes := [])
        assert found is None and notes == [] and back.equals(t)


def test_fractional_epochs_give_no_position() -> None:
    """HF logs fractional epochs: every row changes epoch, there is no batch position to read."""
    t = pl.DataFrame(
        {"step": np.arange(1, 301), "loss": _running(_per_batch(1))[:300], "epoch": np.arange(1, 301) / 100.0}
    )
    assert runmean.deaverage(t, [])[1] is None


def test_the_simulated_running_average_is_read_back_and_named(fixtures_dir: Path) -> None:
    report = report_of(str(fixtures_dir / "sim" / "running_avg.log"))
    st = report.meta.structure
    assert st is not None and st.running_mean == ("loss",)
    ld204 = [f for f in report.findings if f.code == "LD204"]
    assert ld204 and ld204[0].evidence["read_back"] is True
    # the epoch-start swings of the running mean were LD301 level shifts before the read-back
    assert "LD301" not in {f.code for f in report.findings}
    assert report.verdict is not None and report.verdict.batching == "not_batching"


@pytest.mark.reallogs
def test_keras_progress_output_gives_no_epoch_start_spikes(reallogs_dir: Path) -> None:
    """Keras prints running means: the first rows of each epoch swung 1.7-2.6x (three LD101
    warnings at epoch starts) until they were read back as per-interval means."""
    report = report_of(str(reallogs_dir / "keras_stdout_belgian_traffic_4models_50ep.txt"))
    st = report.meta.structure
    assert st is not None and st.running_mean == ("loss", "acc")
    assert not [f for f in report.findings if f.code == "LD101" and f.severity.label != "info"]


#: the only public log that prints running means since the epoch began (Keras progress bars)
RUNNING_MEAN_LOGS = {"keras_stdout_belgian_traffic_4models_50ep.txt"}


@pytest.mark.reallogs
def test_no_other_real_log_is_read_back(reallogs_dir: Path) -> None:
    """The null the threshold rests on: no per-step or interval-mean log is taken for a running mean."""
    logs = sorted(p for p in reallogs_dir.iterdir() if p.is_file() and p.name not in ("MANIFEST.tsv", "README.md"))
    found = set()
    for path in logs:
        try:
            st = pipeline.load(str(path)).meta.structure
        except LogdoctorError:  # logs the tool refuses are covered by their own tests
            continue
        if st is not None and st.running_mean:
            found.add(path.name)
    assert found == RUNNING_MEAN_LOGS


def test_no_real_training_fixture_is_read_back(fixtures_dir: Path) -> None:
    for path in sorted((fixtures_dir / "realruns").glob("*.log")):
        st = pipeline.load(str(path)).meta.structure
        assert st is not None and st.running_mean == (), path.name


def test_long_logs_are_judged_on_a_strided_sample() -> None:
    """Past MAX_PAIRS consecutive pairs the slope is read from every k-th pair: still found, and a
    per-batch loss of the same length still left alone."""
    epochs, per = 40, 5_000  # 200k rows > MAX_PAIRS
    rng = np.random.default_rng(11)
    raw = 0.5 + 0.15 * rng.standard_normal(epochs * per)
    k = np.tile(np.arange(1, per + 1), epochs).astype(float)
    running = (np.cumsum(raw.reshape(epochs, per), axis=1).ravel()) / k
    base = {"step": np.arange(1, raw.size + 1), "epoch": np.repeat(np.arange(epochs), per).astype(float), "batches": k}
    assert raw.size - epochs > runmean.MAX_PAIRS
    found = runmean.deaverage(pl.DataFrame({**base, "loss": running}), [])[1]
    assert found is not None and found.slopes[0] < -0.8
    assert runmean.deaverage(pl.DataFrame({**base, "loss": raw}), [])[1] is None


def _shrinking_step_values(seed: int) -> np.ndarray:
    """A step's own loss (never negative) whose noise shrinks as 1/k through each epoch: the
    slope test alone takes it for a running mean (a fast-learning run over few epochs does this)."""
    rng = np.random.default_rng(seed)
    k = np.tile(np.arange(1, PER_EPOCH + 1), EPOCHS).astype(float)
    return np.round(np.maximum(0.01, 1.0 + 3.0 * rng.standard_normal(k.size) / k), 3)


@pytest.mark.parametrize("seed", range(3))
def test_step_values_whose_undoing_goes_negative_are_no_running_mean(seed: int) -> None:
    values = _shrinking_step_values(seed)
    t = _table(values)
    k = t["batches"].to_numpy()
    slope = runmean.noise_slope(values, k)
    assert slope is not None and slope <= runmean.SLOPE  # the confounder: the slope alone says yes
    assert runmean.impossible_share(values, k) > runmean.MAX_IMPOSSIBLE
    back, found = runmean.deaverage(t, notes := [])
    assert found is None and notes == [] and back.equals(t)


def test_a_loss_that_goes_negative_is_not_judged_by_its_sign() -> None:
    """A mean of values that may be negative may be negative: the sign test does not apply."""
    values = _shrinking_step_values(0) - 1.5
    assert runmean.impossible_share(values, np.tile(np.arange(1, PER_EPOCH + 1), EPOCHS).astype(float)) == 0.0


@pytest.mark.parametrize("seed", range(3))
def test_rounding_near_zero_is_not_taken_for_an_impossible_mean(seed: int) -> None:
    """A running mean of a loss near zero printed to 4 decimals undoes to slightly negative values
    (the rounding grows by (k + j) / gap): within the bound, none is impossible."""
    rng = np.random.default_rng(seed)
    raw = np.abs(0.0004 * rng.standard_normal(EPOCHS * PER_EPOCH))
    values = np.round(_running(raw), 4)
    k = np.tile(np.arange(1, PER_EPOCH + 1), EPOCHS).astype(float)
    assert (runmean.undo(values, k) < 0).any()  # the rounding does go below zero
    assert runmean.impossible_share(values, k) == 0.0
