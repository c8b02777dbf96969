"""A divergence that batch length explains: the loss rises where the batches grow long (a length
reset under sorted or grouped batching) and does not diverge once the length effect is removed.

The divergence detector (LD002) sees the raw loss. Under length-ordered batching the loss follows
batch length, so the first long batches after a run of short ones (a length reset) lift the
smoothed loss well above its best level, reached on the shortest batches, for a whole window:
a divergence by the detector's rule, the same fault as the verdict's. Where the loss tracks batch
length (``lengthstats.tracks``), the same detector with the same factor is run again on the loss
with its linear dependence on log batch length removed (``facts.gather``'s length-adjusted loss);
a divergence that does not survive is the batching's symptom. Without batch statistics, or where
the loss does not track them, nothing changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from logdoctor.detectors.nonfinite import DivergenceDetector
from logdoctor.detectors.robust import Series
from logdoctor.model import Finding

#: The code whose findings are tested.
DIVERGENCE = "LD002"


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
        factor = f.evidence.get("factor")
        detector = DivergenceDetector(factor=float(factor)) if isinstance(factor, int | float) else DivergenceDetector()
        if not detector.find(series):
            out.add(f.first_step)
    return frozenset(out)
