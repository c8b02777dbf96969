"""The generated PyTorch batch sampler: its pure-Python logic always, with torch when installed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from logdoctor.bucketing.plan import recommend
from logdoctor.buckets.sampler import render_sampler

RAW = np.rint(np.random.default_rng(4).lognormal(4.5, 0.8, 3000)) + 1
LENGTHS = np.minimum(RAW, 1024).astype(int)
PLAN = recommend(LENGTHS, 1024, buckets=4, shuffles=1)


def generated() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(render_sampler(PLAN), "<generated sampler>", "exec"), namespace)
    return namespace


def test_source_carries_the_plan() -> None:
    ns = generated()
    assert ns["BOUNDARIES"] == PLAN.boundaries and ns["TOKEN_BUDGET"] == 1024


def test_batches_cover_every_index_once_within_budget_and_bucket() -> None:
    ns = generated()
    lengths = LENGTHS.tolist()
    batches = ns["bucketed_batches"](lengths, epoch=0, seed=1)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(len(lengths)))
    bounds = np.asarray(PLAN.boundaries)
    for b in batches:
        assert len(b) * max(lengths[i] for i in b) <= 1024
        assert np.unique(np.searchsorted(bounds, [lengths[i] for i in b])).size == 1


def test_recomposed_every_epoch_and_seeded() -> None:
    ns = generated()
    sampler = ns["BucketedBatchSampler"](LENGTHS, seed=3)
    e0 = [frozenset(b) for b in sampler]
    assert [frozenset(b) for b in sampler] == e0  # same epoch, same batches
    sampler.set_epoch(1)
    e1 = {frozenset(b) for b in sampler}
    recurring = sum(b in e1 for b in e0 if len(b) > 1) / sum(len(b) > 1 for b in e0)
    assert recurring < 0.05 and len(sampler) == len(e1)
    again = ns["BucketedBatchSampler"](LENGTHS, seed=3)
    again.set_epoch(1)
    assert {frozenset(b) for b in again} == e1


def test_efficiency_matches_the_plan() -> None:
    ns = generated()
    batches = ns["bucketed_batches"](LENGTHS.tolist(), epoch=0, seed=0)
    padded = sum(len(b) * max(LENGTHS[b]) for b in batches)
    assert LENGTHS.sum() / padded == pytest.approx(PLAN.strategies["bucketed"].padding_efficiency, rel=0.02)


def test_with_torch_dataloader() -> None:
    torch = pytest.importorskip("torch")
    ns = generated()
    sampler = ns["BucketedBatchSampler"](LENGTHS, seed=0)
    assert isinstance(sampler, torch.utils.data.Sampler)
    data = torch.arange(len(LENGTHS))
    loader = torch.utils.data.DataLoader(data, batch_sampler=sampler)
    seen = torch.cat(list(loader)).sort().values
    assert torch.equal(seen, data)
