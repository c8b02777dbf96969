"""The data side of a training pipeline, for ``logdoctor probe`` (README: "probe").

``build_loader()`` is the pattern that started logdoctor: sort by length and cut the batches once
(little padding), then shuffle only their order each epoch, so every epoch trains on the same
batches. ``build_loader(shuffle=True)`` is a plain shuffling DataLoader.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Sampler


class Texts(Dataset[dict[str, list[int]]]):
    """4,000 tokenised texts of log-normal length; ``lengths`` is what a probe reads."""

    def __init__(self, n: int = 4000) -> None:
        rng = np.random.default_rng(0)
        self.lengths = np.ceil(rng.lognormal(5.0, 0.8, n)).astype(np.int64)

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, i: int) -> dict[str, list[int]]:
        return {"input_ids": list(range(int(self.lengths[i])))}


class BuildBatchesOnce(Sampler[list[int]]):
    """Sort by length and cut the batches once; shuffle their order every epoch."""

    def __init__(self, lengths: np.ndarray, batch_size: int, seed: int = 0) -> None:
        order = np.argsort(lengths, kind="stable")
        self.batches = [order[i : i + batch_size].tolist() for i in range(0, len(order), batch_size)]
        self.generator = torch.Generator().manual_seed(seed)

    def __iter__(self) -> Iterator[list[int]]:
        return iter([self.batches[i] for i in torch.randperm(len(self.batches), generator=self.generator)])

    def __len__(self) -> int:
        return len(self.batches)


def build_loader(batch_size: int = 16, shuffle: bool = False) -> DataLoader[dict[str, list[int]]]:
    """The training DataLoader."""
    data = Texts()
    if shuffle:
        return DataLoader(data, batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(0))
    return DataLoader(data, batch_sampler=BuildBatchesOnce(data.lengths, batch_size))
