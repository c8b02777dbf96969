"""A divergence that batch length explains: the loss rises where the batches grow long (a length
reset under sorted or grouped batching) and does not diverge once the length effect is removed.

The divergence detector (LD002) sees the raw loss. Under length-ordered batching the loss follows
batch length, so the first long batches after a run of short ones (a length reset) lift the
smoothed loss well above its best level, reached on the shortest batches, for a whole window:
a divergence by the detector's rule, the same fault as the verdict's. Where the loss tracks batch
length (``lengthstats.tracks``), the same detector with the same factor is run again on the loss
with its linear dependence on log batch length removed (``facts.gather``'s length-adjusted loss);
a divergence that does not survive is the batching's symptom. Right after a reset the correlation
has too few long batches to be significant: there the diverged rows are compared with the loss the
run had earlier at the same batch length (within ``MATCH`` in log length), and a stretch that is not
``factor`` times above that is the length, not a divergence. Without batch statistics nothing changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from logdoctor.detectors.divergence import DivergenceDetector
from logdoctor.detectors.robust import Series
from logdoctor.model import Finding

#: The code whose findings are tested.
DIVERGENCE = "LD002"
#: Batch lengths within this distance in log length (about +-10%) are "the same length".
MATCH = 0.1
#: Least rows of the diverged stretch with an earlier row of the same length, to compare at all.
MIN_MATCHED = 3


def _factor(f: Finding) -> float:
    """The rise factor the divergence was found at (its evidence), else the detector's default."""
    given = f.evidence.get("factor")
    return float(given) if isinstance(given, int | float) else DivergenceDetector().factor


def length_explained(findings: Sequence[Finding], steps: np.ndarray, adjusted: np.ndarray) -> frozenset[int]:
    """First steps of the divergences (LD002) that the length-adjusted loss ``adjusted`` (per step
    of ``steps``) no longer shows, by the detector's own rule at the finding's factor.

    The adjusted loss must stay positive (a ratio to its best level means nothing otherwise): where
    it does not, no divergence is called explained.
    """
    ok = np.isfinite(adjusted)
    values = adjusted[ok]
    if values.size < 4 or not np.all(values > 0):
        return frozenset()
    at = steps[ok].astype(np.int64, copy=False)
    series = Series(at, values.astype(np.float64, copy=False), np.zeros(at.size, dtype=np.int64), True)
    out: set[int] = set()
    for f in findings:
        if f.code != DIVERGENCE or f.first_step is None:
            continue
        if not DivergenceDetector(factor=_factor(f)).find(series):
            out.add(f.first_step)
    return frozenset(out)


def length_matched(findings: Sequence[Finding], steps: np.ndarray, loss: np.ndarray, x: np.ndarray) -> frozenset[int]:
    """First steps of the divergences (LD002) whose diverged rows are not ``factor`` times above the
    lowest loss the run had before the stretch at the same batch length (``MATCH``): the loss is back
    at long batches, not diverging. Needs ``MIN_MATCHED`` rows of the stretch with such a reference,
    more than half of its rows, and most of them below ``factor`` x their reference."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lx = np.log(np.where(x > 0, x, np.nan))
    ok = np.isfinite(loss) & np.isfinite(lx)
    out: set[int] = set()
    for f in findings:
        rows = f.evidence.get("rows_above")
        if f.code != DIVERGENCE or f.first_step is None or not isinstance(rows, int | float):
            continue
        factor = _factor(f)
        start = int(np.searchsorted(steps, f.first_step))
        stretch = [i for i in range(start, min(steps.size, start + int(rows))) if ok[i]]
        before = np.flatnonzero(ok[:start])
        below = matched = 0
        for i in stretch:
            same = before[np.abs(lx[before] - lx[i]) <= MATCH]
            if same.size:
                matched += 1
                below += bool(loss[i] <= factor * float(loss[same].min()))
        if matched >= MIN_MATCHED and 2 * matched > len(stretch) and 2 * below > matched:
            out.add(f.first_step)
    return frozenset(out)
