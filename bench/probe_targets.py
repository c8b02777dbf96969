"""Probe targets over 1,000,000 samples for bench/bench_probe.py (``logdoctor probe bench/probe_targets.py:NAME``).

The data set holds only its lengths (log-normal, median ~245 tokens, as bench_buckets.py draws them):
a probe reads its ``lengths`` attribute and never a sample (``__getitem__`` raises).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler, Sampler

N = 1_000_000


class Lengths(Dataset[None]):
    """``n`` samples known only by their lengths."""

    def __init__(self, n: int = N) -> None:
        rng = np.random.default_rng(0)
        self.lengths = np.rint(rng.lognormal(5.5, 0.9, n)).astype(np.int64) + 1

    def __len__(self) -> int:
        return int(self.lengths.size)

    def __getitem__(self, i: int) -> None:
        raise RuntimeError("a probe never loads a sample")


class SortOnce(Sampler[list[int]]):
    """Sort by length and batch once; shuffle only the batch order each epoch (static composition)."""

    def __init__(self, lengths: np.ndarray, size: int) -> None:
        order = np.argsort(lengths, kind="stable")
        self.batches = [order[i : i + size].tolist() for i in range(0, order.size, size)]

    def __iter__(self) -> Iterator[list[int]]:
        return iter([self.batches[i] for i in torch.randperm(len(self.batches)).tolist()])

    def __len__(self) -> int:
        return len(self.batches)


def random(n: int = N, batch_size: int = 32) -> DataLoader[None]:
    """A shuffling DataLoader (torch RandomSampler)."""
    return DataLoader(Lengths(n), batch_size=batch_size, shuffle=True)


def static(n: int = N, batch_size: int = 32) -> DataLoader[None]:
    """Sort and batch once, shuffle the batch order."""
    data = Lengths(n)
    return DataLoader(data, batch_sampler=SortOnce(data.lengths, batch_size))


def grouped(n: int = N, batch_size: int = 32) -> DataLoader[None]:
    """HF's LengthGroupedSampler (group_by_length), as the Trainer builds it."""
    from transformers.trainer_pt_utils import LengthGroupedSampler

    data = Lengths(n)
    sampler = LengthGroupedSampler(batch_size, lengths=data.lengths.tolist())
    return DataLoader(data, batch_size=batch_size, sampler=sampler)


def distributed(n: int = N, batch_size: int = 32) -> DataLoader[None]:
    """A DistributedSampler (one rank as built; ``--world-size`` makes the others)."""
    data = Lengths(n)
    return DataLoader(data, batch_size=batch_size, sampler=DistributedSampler(data, num_replicas=1, rank=0))
