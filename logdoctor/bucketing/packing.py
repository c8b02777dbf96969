"""Token-budget batching model: greedy packing while count × longest ≤ budget, vectorised."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Packing:
    """The batches one epoch of greedy token-budget batching produces.

    Attributes:
        starts: index (into the ordered lengths) where each batch begins.
        sizes: sequences in each batch.
        longest: the longest sequence of each batch (every sequence is padded to it).
    """

    starts: IntArray
    sizes: IntArray
    longest: IntArray

    @property
    def batches(self) -> int:
        """Batches in the epoch."""
        return int(self.starts.size)

    @property
    def padded_tokens(self) -> int:
        """Tokens processed including padding: Σ size × longest."""
        return int((self.sizes * self.longest).sum())


def clip_lengths(lengths: IntArray, max_seq_len: int) -> IntArray:
    """Truncate every sequence longer than ``max_seq_len`` to ``max_seq_len`` (what a tokenizer's
    ``truncation=True, max_length=N`` does); the batching model then never sees a longer one."""
    return np.minimum(lengths, max_seq_len)


class _RangeMax:
    """Sparse table of range maxima, rows built on demand: row j holds max(x[i : i + 2**j])."""

    def __init__(self, lengths: IntArray, levels: int) -> None:
        self.table = np.empty((levels, lengths.size), dtype=np.int32)  # pages touched lazily
        self.table[0] = lengths
        self.built = 1

    def ensure(self, level: int) -> None:
        """Build rows up to ``level``."""
        t = self.table
        while self.built <= level:
            j, half = self.built, 1 << (self.built - 1)
            t[j, -half:] = t[j - 1, -half:]
            np.maximum(t[j - 1, :-half], t[j - 1, half:], out=t[j, :-half])
            self.built += 1

    def query(self, pos: IntArray, k: IntArray) -> NDArray[np.int32]:
        """max(x[pos : pos + k]) for every pair (rows must be built up to log2(max k))."""
        j = np.frexp(k)[1].astype(np.int64) - 1  # floor(log2(k)), exact
        return np.maximum(self.table[j, pos], self.table[j, pos + k - (np.int64(1) << j)])


def batch_sizes_from(lengths: IntArray, token_budget: int, segment_end: IntArray) -> IntArray:
    """For every start position i, how many sequences the greedy batch starting at i holds.

    A batch never crosses ``segment_end[i]`` (the end of i's bucket). The count k is the largest
    with ``k × max(lengths[i:i+k]) ≤ token_budget``; that product grows with k, so a vectorised
    binary search over all starts at once, with O(1) range maxima from a sparse table, finds it.
    Every length must already be ≤ ``token_budget``.
    """
    n = lengths.size
    kmax = max(1, token_budget // max(1, int(lengths.min())))
    hi = np.minimum(segment_end - np.arange(n, dtype=np.int64), kmax)
    # a batch from i holds lengths[i]: k ≤ budget // lengths[i]; and any k ≤ budget // (the longest
    # length) fits: the search starts from those bounds and finds the same largest k in fewer rounds
    np.minimum(hi, token_budget // np.maximum(lengths, 1), out=hi)
    surely = max(1, token_budget // max(1, int(lengths.max())))
    lo = np.minimum(hi, surely)
    rmq = _RangeMax(lengths, max(1, int(hi.max()).bit_length()))

    def fits(pos: IntArray, k: IntArray) -> NDArray[np.bool_]:
        return k * rmq.query(pos, k).astype(np.int64) <= token_budget

    # gallop: try k = 2, 4, 8, ... times the sure size, so that small batches cost few rounds
    pos, step = np.flatnonzero(lo < hi), 2 * surely
    while pos.size:
        k = np.minimum(step, hi[pos])
        rmq.ensure(int(k.max()).bit_length() - 1)
        ok = fits(pos, k)
        lo[pos[ok]] = k[ok]
        hi[pos[~ok]] = k[~ok] - 1
        pos, step = pos[ok & (k < hi[pos])], step * 2
    # binary search inside the bracket the gallop left
    pos = np.flatnonzero(lo < hi)
    while pos.size:
        a, b = lo[pos], hi[pos]
        mid = (a + b + 1) // 2
        ok = fits(pos, mid)
        lo[pos] = np.where(ok, mid, a)
        hi[pos] = np.where(ok, b, mid - 1)
        pos = pos[lo[pos] < hi[pos]]
    return lo


def pack(lengths: IntArray, token_budget: int, segment_ids: IntArray | None = None) -> Packing:
    """Greedy token-budget batching of ``lengths`` in the given order.

    Args:
        lengths: sequence lengths in the order the sampler yields them, each ≤ token_budget.
        token_budget: the most padded tokens (count × longest) one batch may hold.
        segment_ids: optional non-decreasing bucket id per position; batches never mix buckets.

    Returns:
        The batches of the epoch (the last batch of each segment may be partial).
    """
    n = lengths.size
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Packing(empty, empty, empty)
    if segment_ids is None:
        segment_end = np.full(n, n, dtype=np.int64)
    else:
        change = np.flatnonzero(np.diff(segment_ids)) + 1
        ends = np.append(change, n)
        segment_end = np.repeat(ends, np.diff(np.concatenate(([0], ends))))
    sizes_at = batch_sizes_from(lengths, token_budget, segment_end)
    nxt = (np.arange(n, dtype=np.int64) + sizes_at).tolist()
    starts_list: list[int] = []
    s = 0
    while s < n:  # one Python step per batch (tens of thousands), not per sequence
        starts_list.append(s)
        s = nxt[s]
    starts = np.asarray(starts_list, dtype=np.int64)
    sizes = sizes_at[starts]
    longest = np.maximum.reduceat(lengths, starts).astype(np.int64)
    return Packing(starts=starts, sizes=sizes, longest=longest)


def bucket_of(lengths: IntArray, boundaries: IntArray) -> IntArray:
    """Bucket index of each length; bucket b holds lengths in (boundaries[b-1], boundaries[b]]."""
    return np.searchsorted(boundaries, lengths, side="left").astype(np.int64)


def shuffled_order(n: int, rng: np.random.Generator) -> IntArray:
    """A random permutation (strategy a: plain random shuffle)."""
    return rng.permutation(n).astype(np.int64)


def bucketed_order(buckets: IntArray, rng: np.random.Generator) -> IntArray:
    """Positions grouped by bucket, shuffled within each bucket (strategy c)."""
    return np.lexsort((rng.random(buckets.size), buckets)).astype(np.int64)
