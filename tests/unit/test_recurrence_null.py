"""The recurrence null: i.i.d. batches with coarse signatures are never static, at any run length."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from logdoctor.diagnosis import recurrence as rc
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.diagnosis.thresholds import DEFAULT
from tests.unit.synth import make_run


def _iid_batches(n: int, epochs: int, seed: int, spread: float = 0.05) -> dict[str, np.ndarray]:
    """Token-budget batches of similar length drawn i.i.d.: len_min/len_max within ±spread of
    the mean, so the signature is nearly one number (the issue's 20,000-step false static)."""
    rng = np.random.default_rng(seed)
    mean = rng.normal(300, 300 * spread / 3, n).round(1)
    lo = np.floor(mean * (1 - spread * rng.random(n)))
    hi = np.ceil(mean * (1 + spread * rng.random(n)))
    seqs = np.floor(8192 / hi)
    return {
        "seqs": seqs,
        "tokens": np.round(seqs * mean),
        "len_min": lo,
        "len_max": hi,
        "len_mean": mean,
        "epoch": np.repeat(np.arange(epochs), -(-n // epochs))[:n].astype(float),
    }


@pytest.mark.parametrize(
    ("n", "epochs", "seed"),
    [(2_000, 5, 1), (20_000, 8, 2), (20_000, 10, 3), (200_000, 6, 4), (1_000_000, 7, 5)],
)
def test_iid_coarse_signatures_are_never_static(n: int, epochs: int, seed: int) -> None:
    cols = _iid_batches(n, epochs, seed)
    ids = (
        pl.DataFrame({k: v for k, v in cols.items() if k != "epoch"})
        .select(pl.struct(pl.all()).rank("dense"))
        .to_series()
        .to_numpy()
        .astype(np.int64)
    )
    r = rc.recurrence(ids, cols["epoch"].astype(np.int64), 1.0, "signature", ("seqs",), min_excess=DEFAULT.min_excess)
    assert r is not None and not DEFAULT.static(r)
    assert r.pairs is not None and abs(r.pairs.observed - r.pairs.expected) < 4 * r.pairs.sd
    assert abs(r.fraction - r.chance) < 0.05  # the null's expectation is right for i.i.d. draws


@pytest.mark.parametrize("seed", range(6))
def test_iid_coarse_signatures_are_never_static_in_the_verdict(seed: int) -> None:
    n = 20_000
    rng = np.random.default_rng(100 + seed)
    cols = _iid_batches(n, int(rng.integers(5, 11)), seed, spread=float(rng.uniform(0.02, 0.08)))
    loss = 3.0 * np.exp(-np.arange(n) / 5000) + rng.normal(0, 0.05, n)
    for keep_epoch in (True, False):  # without the epoch column, epochs are inferred
        c = cols if keep_epoch else {k: v for k, v in cols.items() if k != "epoch"}
        v = BatchingDiagnosis().diagnose(make_run(loss, **c), []).verdict
        assert v.batching != "static", v.summary


def test_null_p_values_are_uniform_for_iid_signatures() -> None:
    ps = []
    for seed in range(40):
        cols = _iid_batches(5_000, 6, 1000 + seed, spread=0.03)
        ids = np.unique(np.c_[cols["len_min"], cols["len_max"]], axis=0, return_inverse=True)[1]
        epoch = cols["epoch"].astype(np.int64)
        r = rc.recurrence(ids.ravel(), epoch, 1.0, "signature", ("x",), min_excess=DEFAULT.min_excess)
        assert r is not None
        ps.append(r.p_value)
    assert 0.3 < float(np.mean(ps)) < 0.7 and min(ps) > 1e-4


def test_static_signatures_are_found_by_their_occupancy() -> None:
    rng = np.random.default_rng(9)
    base = rng.integers(0, 400, 2000)  # coarse: many batches share a signature within an epoch
    ids = np.concatenate([rng.permutation(base) for _ in range(6)])
    epoch = np.repeat(np.arange(6), base.size)
    r = rc.recurrence(ids, epoch, 1.0, "signature", ("x",), min_excess=DEFAULT.min_excess)
    assert r is not None and DEFAULT.static(r) and r.excess > 0.8
    iid = rng.integers(0, 400, ids.size)
    r0 = rc.recurrence(iid, epoch, 1.0, "signature", ("x",), min_excess=DEFAULT.min_excess)
    assert r0 is not None and not DEFAULT.static(r0)
