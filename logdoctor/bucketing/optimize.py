"""Exact optimal bucket boundaries: dynamic programming over the distinct lengths.

Objective (``bucket_upper_padding``): choose K buckets, each an interval of lengths
``(lower, upper]``, to minimise the padding tokens when every sequence is padded to its bucket's
upper boundary: ``Σ_sequences (upper(bucket(len)) − len)``. Under token-budget batching a batch is
padded to its own longest sequence, which never exceeds the bucket's upper boundary, so this is a
tight upper bound on the padding any batch composition in those buckets can cost; it is exact to
optimise and does not depend on the shuffle. An optimal upper boundary always sits on a length
that occurs, so the search runs over the D distinct lengths.

The cost of a bucket holding distinct lengths v[j..i] is ``v[i]·W(j,i) − S(j,i)`` (W: count,
S: sum of lengths), which satisfies the quadrangle inequality, so the optimal split points are
monotone and each DP layer is solved by divide and conquer in O(D log D): O(K·D log D) in all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

OBJECTIVE = "bucket_upper_padding"
OBJECTIVE_TEXT = (
    "minimise padding tokens when every sequence is padded to its bucket's upper boundary, "
    "Σ(upper − len); an upper bound on the padding of any batch drawn within the buckets"
)


@dataclass(frozen=True, slots=True)
class Histogram:
    """Distinct lengths with their counts and prefix sums (the DP's input)."""

    values: NDArray[np.int64]
    counts: NDArray[np.int64]
    cum_count: NDArray[np.int64]  # cum_count[i] = Σ counts[:i]
    cum_sum: NDArray[np.int64]  # cum_sum[i] = Σ (values·counts)[:i]

    @classmethod
    def of(cls, lengths: NDArray[np.int64]) -> Histogram:
        """Histogram of a length array."""
        values, counts = np.unique(lengths, return_counts=True)
        counts = counts.astype(np.int64)
        zero = np.zeros(1, dtype=np.int64)
        return cls(
            values=values.astype(np.int64),
            counts=counts,
            cum_count=np.concatenate((zero, np.cumsum(counts))),
            cum_sum=np.concatenate((zero, np.cumsum(values * counts))),
        )

    def cost(self, j: NDArray[np.int64], i: NDArray[np.int64]) -> NDArray[np.int64]:
        """Padding of buckets holding distinct values j..i (inclusive), padded to values[i]."""
        w = self.cum_count[i + 1] - self.cum_count[j]
        s = self.cum_sum[i + 1] - self.cum_sum[j]
        return self.values[i] * w - s


#: Distinct lengths up to which a layer is one (D × D) array operation: for the few hundred distinct
#: lengths of an everyday log this is ~20x faster than the divide and conquer's thousands of small
#: numpy calls, at 2 MB of int64 per layer.
DENSE_MAX = 512
_BIG = np.iinfo(np.int64).max // 4


def _layer(
    hist: Histogram,
    prev: NDArray[np.int64],
    k: int,
    above: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """One DP layer: best[i] = min_j prev[j−1] + cost(j, i) over j ≥ k−1 (k buckets, 0-based k−1
    earlier splits), with the argmin j (the first, on ties).

    Because the cost satisfies the quadrangle inequality, the first argmin of row i never lies
    left of the first argmin of row i−1 (Monge): the divide and conquer searches each row only
    between its neighbours' argmins and finds the same first argmin as a search of the whole row,
    which ``_layer_dense`` does for up to ``DENSE_MAX`` distinct lengths (tests/unit/test_bucket_dp.py).
    ``above``: ``_above_diagonal(D)``, shared by the layers of one solve (built here when not given)."""
    if hist.values.size <= DENSE_MAX:
        return _layer_dense(hist, prev, k, above)
    return _layer_split(hist, prev, k)


def _above_diagonal(d: int) -> NDArray[np.bool_]:
    """(d × d) mask of the pairs j > i (no bucket): any layer's block is its lower-right corner."""
    return np.triu(np.ones((d, d), dtype=np.bool_), 1)


def _layer_dense(
    hist: Histogram,
    prev: NDArray[np.int64],
    k: int,
    above: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``_layer`` as one array operation over every (i, j ≤ i) pair (``above``: ``_above_diagonal``,
    built here when not given)."""
    d = hist.values.size
    above = _above_diagonal(d) if above is None else above
    best = np.full(d, _BIG, dtype=np.int64)
    arg = np.zeros(d, dtype=np.int64)
    if k - 1 >= d:
        return best, arg
    # before[j] + v[i]·(C[i+1] − C[j]) − (S[i+1] − S[j]), regrouped into a row term, a column term
    # and an outer product (integers, far from overflow: exactly the same sums in any order), built
    # in one (D × D) buffer
    before = np.concatenate(([_BIG], prev[:-1]))[k - 1 :]  # before[j] = prev[j-1]
    v, cc, cs = hist.values[k - 1 :], hist.cum_count, hist.cum_sum
    row = v * cc[k:] - cs[k:]
    col = before + cs[k - 1 : d]
    table = np.multiply.outer(v, cc[k - 1 : d])
    np.subtract(col[None, :], table, out=table)
    table += row[:, None]
    np.copyto(table, np.iinfo(np.int64).max, where=above[k - 1 :, k - 1 :])  # j > i: no bucket
    pick = np.argmin(table, axis=1)
    rows = np.arange(pick.size)
    best[k - 1 :] = table[rows, pick]
    arg[k - 1 :] = pick + (k - 1)
    return best, arg


def _layer_split(
    hist: Histogram,
    prev: NDArray[np.int64],
    k: int,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``_layer`` by divide and conquer on the monotone argmin: O(D log D)."""
    d = hist.values.size
    big = _BIG
    best = np.full(d, big, dtype=np.int64)
    arg = np.zeros(d, dtype=np.int64)
    before = np.concatenate(([big], prev[:-1]))  # before[j] = prev[j-1]
    stack = [(k - 1, d - 1, k - 1, d - 1)]
    while stack:
        lo, hi, olo, ohi = stack.pop()
        if lo > hi:
            continue
        mid = (lo + hi) // 2
        js = np.arange(olo, min(mid, ohi) + 1, dtype=np.int64)
        vals = before[js] + hist.cost(js, np.full(js.size, mid, dtype=np.int64))
        pick = int(np.argmin(vals))
        best[mid], arg[mid] = vals[pick], js[pick]
        stack.append((lo, mid - 1, olo, int(js[pick])))
        stack.append((mid + 1, hi, int(js[pick]), ohi))
    return best, arg


def solve(
    hist: Histogram, max_k: int, until: Callable[[int], bool] | None = None, at_least: int = 1
) -> tuple[list[int], list[NDArray[np.int64]]]:
    """Optimal objective for K = 1, 2, ... buckets and the argmin tables to recover boundaries.

    Args:
        hist: the length histogram.
        max_k: the most buckets solved for (capped at the number of distinct lengths).
        until: stop once some K's objective satisfies it and at least ``at_least`` are solved.
        at_least: solve at least this many K (for the efficiency-vs-K curve).

    Returns:
        (objective per K as a list indexed K−1, argmin table per K).
    """
    d = hist.values.size
    idx = np.arange(d, dtype=np.int64)
    layer = hist.cost(np.zeros(d, dtype=np.int64), idx)
    objectives, args = [int(layer[-1])], [np.zeros(d, dtype=np.int64)]
    above = _above_diagonal(d) if 1 < d <= DENSE_MAX and max_k > 1 else None
    for k in range(2, min(max_k, d) + 1):
        if until is not None and k > at_least and any(until(v) for v in objectives):
            break
        layer, arg = _layer(hist, layer, k, above)
        objectives.append(int(layer[-1]))
        args.append(arg)
    return objectives, args


def boundaries_for(hist: Histogram, args: list[NDArray[np.int64]], k: int) -> list[int]:
    """Upper boundaries (ascending, last = longest length) of the optimal K-bucket split."""
    uppers: list[int] = []
    i = hist.values.size - 1
    for layer in range(k, 0, -1):
        uppers.append(int(hist.values[i]))
        i = int(args[layer - 1][i]) - 1
    return uppers[::-1]


def optimal_boundaries(lengths: NDArray[np.int64], k: int) -> tuple[list[int], int]:
    """Optimal upper boundaries for ``k`` buckets and the objective's value (padding tokens)."""
    hist = Histogram.of(lengths)
    objectives, args = solve(hist, k)
    k_eff = len(objectives)
    return boundaries_for(hist, args, k_eff), objectives[k_eff - 1]
