"""ruptures' exact penalised search (KernelCPD, linear kernel = PELT with the L2 cost), loaded alone.

``import ruptures`` executes the package's ``__init__``, which imports every estimator and cost and
with them scipy.stats, scipy.spatial and scipy.signal: about a second before any search runs. The
search logdoctor uses is one compiled function, ``ekcpd_pelt_L2`` in ruptures' C extension
``ruptures.detection._detection.ekcpd``, which needs only numpy. This module loads that extension
from the installed ruptures by its file, without running the package's ``__init__``, and falls back
to ``ruptures.KernelCPD`` when it cannot (another layout, another ruptures version).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from logdoctor.detectors.extload import compiled_function
from logdoctor.detectors.robust import FloatArray

_EXTENSION = "ruptures.detection._detection.ekcpd"


@cache
def _compiled_pelt() -> Callable[..., Any] | None:
    """ruptures' compiled ``ekcpd_pelt_L2``, or None when it cannot be loaded on its own."""
    return compiled_function(_EXTENSION, "ekcpd_pelt_L2")


def pelt_l2(signal: FloatArray, pen: float, min_size: int) -> list[int]:
    """Exact penalised L2 segmentation of a 1-D signal: ``KernelCPD("linear").fit(x).predict(pen=pen)``.

    Returns the segment ends (ruptures convention: the last one is ``len(signal)``); ``[n]`` when
    no split is admissible (two segments of ``min_size`` do not fit), where ruptures would raise.
    """
    n = int(signal.size)
    min_size = max(1, int(min_size))
    if 2 * min_size > n:
        return [n]
    x = np.ascontiguousarray(signal, dtype=np.double).reshape(-1, 1)
    pelt = _compiled_pelt()
    if pelt is None:
        import ruptures as rpt  # the whole package: only where the extension cannot be loaded alone

        return [int(k) for k in rpt.KernelCPD(kernel="linear", min_size=min_size, jump=1).fit(x).predict(pen=pen)]
    path = pelt(x, float(pen), min_size)
    ends: list[int] = []
    i = n
    while i > 0:
        ends.append(i)
        i = int(path[i])
    return ends[::-1]
