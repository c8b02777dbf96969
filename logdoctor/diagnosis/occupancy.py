"""Signature occupancy of epochs against a permutation null: the static test for batch signatures.

Under any pipeline that recomposes its batches from i.i.d. (or exchangeable) draws, whatever the
length distribution, the epochs of the copies of a signature are a random allocation given the
signature's count and the epoch sizes. Static composition puts the copies of a rare signature in
different epochs: same-epoch pairs of copies fall far below the null's expectation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from logdoctor.stats.distributions import binom_cdf, lgamma_of_integers, nbinom_cdf


@dataclass(frozen=True, slots=True)
class Pairs:
    """Same-epoch pairs among the copies of rare signatures, observed and under the permutation
    null (copies allocated to epochs at random given each signature's count and the epoch sizes).

    Attributes:
        signatures: rare signatures with at least two copies (the informative ones).
        observed: pairs of copies that share an epoch.
        expected: their expectation under the null.
        if_static: their expectation under static composition (the same multiset of batches in
            every epoch): with every step logged, a signature's c copies over E epochs are c/E
            batches per epoch, ``E·C(c/E, 2)`` pairs (0 for one batch per epoch). With sparser
            logging the per-epoch multiplicity cannot be told from c (a batch logged by luck in 3
            of 6 epochs), so only signatures with at most one copy per epoch on average are used
            and a static run's pairs are taken as 0.
        sd: the null standard deviation.
        p_value: lower-tail p of ``observed`` (static puts the copies in different epochs).
        p_if_static: the same p at the static expectation: how decisive the test can be.
    """

    signatures: int
    observed: float
    expected: float
    if_static: float
    sd: float
    p_value: float
    p_if_static: float = 1.0

    @property
    def excess(self) -> float:
        """Where the observed pairs sit between the null (0) and static composition (1)."""
        gap = self.expected - self.if_static
        return (self.expected - self.observed) / gap if gap > 0 else 0.0


def same_epoch_pairs(ids: np.ndarray, epoch: np.ndarray, f: float = 1.0, per_epoch: float = 2.0) -> Pairs:
    """Count same-epoch pairs of copies of each rare signature and their null moments.

    For a signature with c copies allocated multinomially to epochs with shares p_e, the same-epoch
    pairs W have mean C(c,2)·π2 and variance C(c,2)·π2(1-π2) + c(c-1)(c-2)(π3-π2²), with
    π2 = Σp_e², π3 = Σp_e³ (pairs of pairs sharing no copy are independent). Signatures are summed
    as independent. Exact for any length distribution, since it conditions on the counts.
    """
    n_ep = int(epoch.max()) + 1
    per_epoch = per_epoch if f >= 1 else 1.0
    count = np.bincount(ids)
    rare = (count >= 2) & (count <= per_epoch * n_ep)
    sel = rare[ids]
    if not sel.any():
        return Pairs(0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0)
    uniq, inv = np.unique(ids[sel], return_inverse=True)
    cells = np.bincount(inv * n_ep + epoch[sel], minlength=uniq.size * n_ep).astype(float)
    observed = float(np.sum(cells * (cells - 1) / 2))
    p = np.bincount(epoch, minlength=n_ep) / epoch.size
    pi2, pi3 = float(np.sum(p**2)), float(np.sum(p**3))
    c = count[uniq].astype(float)
    pairs = c * (c - 1) / 2
    mean = float(np.sum(pairs) * pi2)
    var = float(np.sum(pairs * pi2 * (1 - pi2) + c * (c - 1) * (c - 2) * (pi3 - pi2**2)))
    sd = float(np.sqrt(max(var, 1e-12)))
    m = c / n_ep  # batches per epoch sharing the signature under static, when all are logged
    if_static = float(np.sum(n_ep * m * (m - 1) / 2)) if f >= 1 else 0.0
    pval = lower_tail(observed, mean, var)
    return Pairs(int(uniq.size), observed, mean, if_static, sd, pval, lower_tail(if_static, mean, var))


def lower_tail(w: float, mean: float, var: float) -> float:
    """P(W <= w) for a count with this null mean and variance: a binomial when underdispersed (a
    sum of independent pair indicators: exactly binomial when every signature has 2 copies), else a
    negative binomial; the normal approximation is far too loose in the tail that decides static.
    """
    if mean <= 0:
        return 1.0
    if var < mean * (1 - 1e-9):
        n = max(1, round(mean * mean / (mean - var)))
        return binom_cdf(w, n, min(1.0, mean / n))
    r = mean * mean / max(var - mean, 1e-9)
    return nbinom_cdf(w, r, mean / max(var, mean))


def chance(ids: np.ndarray, epoch: np.ndarray) -> float:
    """The share of later-epoch rows whose signature was seen in an earlier epoch, expected under
    the permutation null: given its count c among N rows, a row with B rows before its epoch has
    none of its c-1 other copies among them with probability C(N-1-B, c-1) / C(N-1, c-1).
    """
    n_tot = ids.size
    c = np.bincount(ids)[ids]
    before = np.cumsum(np.bincount(epoch))[epoch] - np.bincount(epoch)[epoch]
    later = epoch >= 1
    b, cc = before[later], c[later]
    if not b.size:
        return 0.0
    free = n_tot - 1 - b
    ok = free >= cc - 1
    # the arguments are whole numbers: lgamma once per distinct value (= scipy.special.gammaln)
    lg = lgamma_of_integers
    log_none = np.full(b.size, -np.inf)
    f, k = free[ok], cc[ok]
    log_none[ok] = lg(f + 1) - lg(f - k + 2) - math.lgamma(n_tot) + lg(n_tot - k + 1)
    return float(np.mean(1 - np.exp(log_none)))
