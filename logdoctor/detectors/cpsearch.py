"""Fast penalised L2 changepoint search: exact on block means, refined at full resolution.

The series is aggregated into at most ``max_blocks`` block means and the exact penalised L2
segmentation runs there (ruptures KernelCPD with the linear kernel: PELT with the L2 cost, in C).
Block means blur regimes a few blocks long, so runs of short coarse segments are searched again
exactly at full resolution (PELT is fast where changes are dense). Breakpoints are then refined
at full resolution (best split between neighbours within two blocks, O(window) with cumulative
sums), pairs straddling a block edge are merged, and breakpoints not worth the penalty are
pruned. Exact when the series has at most max_blocks points."""

from __future__ import annotations

import itertools

import numpy as np

from logdoctor.detectors import robust
from logdoctor.detectors.kernelcpd import pelt_l2
from logdoctor.detectors.robust import FloatArray


def _sse(c1: FloatArray, c2: FloatArray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sum of squared deviations from the mean of y[a:b] from cumulative sums (vectorised)."""
    n = (b - a).astype(np.float64)
    s = c1[b] - c1[a]
    return (c2[b] - c2[a]) - np.where(n > 0, s * s / np.maximum(n, 1), 0.0)


def fast_breakpoints(y: FloatArray, pen: float, *, max_blocks: int = 2000, min_size: int = 2) -> list[int]:
    """Penalised L2 changepoints of ``y`` (ruptures convention: segment ends, last = len(y)).

    Exact (same as ``rpt.Pelt(model="l2").fit(y).predict(pen)``) when ``len(y) <= max_blocks``;
    otherwise a block-level exact search, exact again where coarse segments are short, refined
    locally at full resolution (measured limits: docs/detectors.md, "Hard cases").
    """
    n = y.size
    if n < 2 * min_size:
        return [n]
    blocks, b = robust.block_reduce(y, max_blocks, how="mean")
    if blocks.size < 4:
        return [n]
    block_min = max(1, min_size // b) if b > 1 else min_size
    coarse = [min(n, k * b) for k in pelt_l2(blocks, pen / b, block_min)[:-1]]
    if b == 1 or not coarse:
        return [*coarse, n]
    regions = _dense_regions(coarse, n, b)
    if sum(hi - lo for lo, hi, _ in regions) > n // 2 and _work(coarse, n) <= EXACT_WORK_PER_ROW * n:
        # mostly short regimes: block means blur them (890 of 1,240 breakpoints found, measured),
        # while the exact search is fast there (PELT prunes well when changes are dense)
        return pelt_l2(y, pen, min_size)
    coarse = _exact_regions(y, pen, min_size, coarse, regions)
    c1 = np.concatenate(([0.0], np.cumsum(y)))
    c2 = np.concatenate(([0.0], np.cumsum(y * y)))
    refined = _refine(c1, c2, coarse, n, b, min_size)
    refined = _merge_close(c1, c2, _prune(c1, c2, refined, n, pen), n, b, pen)
    for _ in range(5):  # each pass moves a breakpoint at most one block: repeat until stable
        moved = _refine(c1, c2, refined, n, b, min_size)
        if moved == refined:
            break
        refined = moved
    return [*refined, n]


#: A coarse segment shorter than this many blocks is a short regime, which block means blur: its
#: region is searched exactly at full resolution (measured on regimes of 5-200 rows at n = 5k-100k:
#: 4 blocks left 2-8% of the breakpoints wrong, 20 none).
DENSE_BLOCKS = 20
#: Budgets of the exact searches, in rows x candidate rows (PELT keeps about one segment's length of
#: candidates on level regimes, more on sloped ones): the whole series when mostly short regimes
#: (1.1e7 estimated, 0.04 s taken at n = 100k), dense regions otherwise (a decaying loss's steep start: 3e6
#: cost 0.01 s at 100k, 3e7 0.15 s, for the same breakpoints).
EXACT_WORK_PER_ROW, EXACT_WORK = 300, 3e6


def _work(bkps: list[int], n: int) -> float:
    """The exact search's work on rows cut at ``bkps``: sum of squared segment lengths, an upper
    bound when the true segments split these (PELT keeps about one segment of candidates per row)."""
    lengths = np.diff(np.asarray([0, *bkps, n], dtype=np.float64))
    return float(np.square(lengths).sum())


def _dense_regions(coarse: list[int], n: int, b: int) -> list[tuple[int, int, float]]:
    """(first row, end row, work) of each run of coarse segments shorter than ``DENSE_BLOCKS``
    blocks; its ends are coarse breakpoints (or the series' ends), kept and refined as the others."""
    edges = [0, *coarse, n]
    out: list[tuple[int, int, float]] = []
    for a, z in itertools.pairwise(edges):
        if z - a >= DENSE_BLOCKS * b:
            continue
        if out and a == out[-1][1]:
            out[-1] = (out[-1][0], z, out[-1][2] + float(z - a) ** 2)
        else:
            out.append((a, z, float(z - a) ** 2))
    return out


def _exact_regions(
    y: FloatArray, pen: float, min_size: int, coarse: list[int], regions: list[tuple[int, int, float]]
) -> list[int]:
    """``coarse`` with the breakpoints inside each dense region replaced by the exact search's on
    that region at full resolution, while the regions' work stays within ``EXACT_WORK``."""
    left = EXACT_WORK
    exact: list[int] = []
    solved: list[tuple[int, int]] = []
    for lo, hi, work in regions:
        if work > left:
            continue
        left -= work
        solved.append((lo, hi))
        exact += [lo + k for k in pelt_l2(y[lo:hi], pen, min_size)[:-1]]
    kept = (t for t in coarse if not any(lo < t < hi for lo, hi in solved))
    return sorted({*kept, *exact})


def _refine(c1: FloatArray, c2: FloatArray, bkps: list[int], n: int, b: int, min_size: int) -> list[int]:
    """Move each breakpoint to the best split between its neighbours within +-2b rows."""
    out: list[int] = []
    for i, t in enumerate(bkps):
        prev = out[-1] if out else 0
        nxt = bkps[i + 1] if i + 1 < len(bkps) else n
        lo, hi = max(prev + min_size, t - 2 * b), min(nxt - min_size, t + 2 * b)
        if hi < lo:
            out.append(t)
            continue
        cand = np.arange(lo, hi + 1)
        cost = _sse(c1, c2, np.full_like(cand, prev), cand) + _sse(c1, c2, cand, np.full_like(cand, nxt))
        out.append(int(cand[np.argmin(cost)]))
    return out


def _merge_close(c1: FloatArray, c2: FloatArray, bkps: list[int], n: int, b: int, pen: float) -> list[int]:
    """Replace two breakpoints less than a block apart by the best single split between their
    neighbours when that lowers the penalised cost (one change straddling a block edge)."""
    out = list(bkps)
    i = 0
    while i + 1 < len(out):
        if out[i + 1] - out[i] > b:
            i += 1
            continue
        prev = out[i - 1] if i else 0
        nxt = out[i + 2] if i + 2 < len(out) else n
        a, z = np.array([prev]), np.array([nxt])
        t1, t2 = np.array([out[i]]), np.array([out[i + 1]])
        keep = float((_sse(c1, c2, a, t1) + _sse(c1, c2, t1, t2) + _sse(c1, c2, t2, z))[0]) + pen
        cand = np.arange(out[i] - b, out[i + 1] + b + 1)
        cand = cand[(cand > prev + 1) & (cand < nxt - 1)]
        if cand.size:
            cost = _sse(c1, c2, np.full_like(cand, prev), cand) + _sse(c1, c2, cand, np.full_like(cand, nxt))
            j = int(np.argmin(cost))
            if float(cost[j]) < keep:
                out[i : i + 2] = [int(cand[j])]
                continue
        i += 1
    return out


def _prune(c1: FloatArray, c2: FloatArray, bkps: list[int], n: int, pen: float) -> list[int]:
    """Drop, weakest first, breakpoints whose removal raises the L2 cost by less than ``pen``
    (block aggregation can put two breakpoints around one change that falls inside a block)."""
    cur = np.asarray(bkps, dtype=np.int64)
    while cur.size:
        e = np.concatenate(([0], cur, [n]))
        a, t, z = e[:-2], e[1:-1], e[2:]
        gain = _sse(c1, c2, a, z) - _sse(c1, c2, a, t) - _sse(c1, c2, t, z)
        i = int(np.argmin(gain))
        if gain[i] >= pen:
            break
        cur = np.delete(cur, i)
    return [int(v) for v in cur]
