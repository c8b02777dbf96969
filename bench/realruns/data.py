"""Text shipped with Python (stdlib sources), char-tokenised into variable-length sequences, and
the batch samplers of real pipelines: random, sorted, static, bucketed (and HF's in train.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

#: stdlib modules whose source is the corpus (present in every CPython install)
SOURCES = (
    "argparse.py",
    "textwrap.py",
    "json/decoder.py",
    "json/encoder.py",
    "string.py",
    "difflib.py",
    "calendar.py",
    "shlex.py",
    "fractions.py",
    "pprint.py",
)
VOCAB = 128
MAX_LEN = 160


def corpus(n: int, seed: int = 0) -> list[np.ndarray]:
    """``n`` sequences of ASCII codes (8..MAX_LEN chars): runs of consecutive source lines whose
    target length is drawn log-normally, so batch lengths vary as in real text data."""
    root = Path(os.__file__).parent
    text = "\n".join((root / s).read_text(encoding="utf-8", errors="replace") for s in SOURCES)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    i = 0
    while len(out) < n:
        target = int(np.clip(rng.lognormal(3.8, 0.7), 8, MAX_LEN))
        chunk = ""
        while len(chunk) < target:
            chunk += lines[i % len(lines)] + "\n"
            i += 1
        codes = np.frombuffer(chunk[:target].encode("ascii", "replace"), dtype=np.uint8)
        out.append(np.minimum(codes, VOCAB - 1).astype(np.int64))
    return out


def chunk(order: np.ndarray, size: int) -> list[np.ndarray]:
    """Consecutive batches of ``size`` indices (the last one may be short)."""
    return [order[i : i + size] for i in range(0, order.size, size)]


class Sampler:
    """Per-epoch lists of index batches for one strategy.

    random: shuffle, batch. sorted: sort by length, batch, same order every epoch. static: sort
    and batch once, shuffle only the batch order each epoch. bucketed: shuffle within length
    buckets (quantiles), batch each bucket, shuffle the batches, every epoch. fixed: shuffle and
    batch once, then feed those batches in the same order every epoch (a DataLoader without shuffle
    over pre-built batches).
    """

    def __init__(self, strategy: str, lengths: np.ndarray, size: int, seed: int, buckets: int = 6) -> None:
        self.strategy, self.lengths, self.size = strategy, lengths, size
        self.rng = np.random.default_rng(seed)
        self.fixed = chunk(np.argsort(lengths, kind="stable"), size)
        edges = np.quantile(lengths, np.linspace(0, 1, buckets + 1)[1:-1])
        self.bucket = np.searchsorted(edges, lengths, side="right")
        # its own generator: the other strategies' batches stay what they were
        self.prebuilt = chunk(np.random.default_rng(seed + 1).permutation(lengths.size), size)

    def epoch(self) -> list[np.ndarray]:
        """The batches of the next epoch, in feeding order."""
        if self.strategy == "random":
            return chunk(self.rng.permutation(self.lengths.size), self.size)
        if self.strategy == "sorted":
            return list(self.fixed)
        if self.strategy == "fixed":
            return list(self.prebuilt)
        if self.strategy == "static":
            return [self.fixed[i] for i in self.rng.permutation(len(self.fixed))]
        if self.strategy == "bucketed":
            batches: list[np.ndarray] = []
            for b in np.unique(self.bucket):
                batches += chunk(self.rng.permutation(np.flatnonzero(self.bucket == b)), self.size)
            return [batches[i] for i in self.rng.permutation(len(batches))]
        raise ValueError(f"unknown strategy {self.strategy!r}")

    def __iter__(self) -> Iterator[np.ndarray]:
        """The next epoch's batches: a batch sampler, as ``logdoctor probe`` walks one."""
        return iter(self.epoch())


def pad(seqs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Right-padded ids and a mask of real tokens."""
    width = max(s.size for s in seqs)
    ids = np.zeros((len(seqs), width), dtype=np.int64)
    mask = np.zeros((len(seqs), width), dtype=bool)
    for r, s in enumerate(seqs):
        ids[r, : s.size], mask[r, : s.size] = s, True
    return ids, mask
