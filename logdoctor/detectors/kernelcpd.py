"""ruptures' exact penalised search (KernelCPD, linear kernel = PELT with the L2 cost), loaded alone.

``import ruptures`` executes the package's ``__init__``, which imports every estimator and cost and
with them scipy.stats, scipy.spatial and scipy.signal: about a second before any search runs. The
search logdoctor uses is one compiled function, ``ekcpd_pelt_L2`` in ruptures' C extension
``ruptures.detection._detection.ekcpd``, which needs only numpy. This module loads that extension
from the installed ruptures by its file, without running the package's ``__init__``, and falls back
to ``ruptures.KernelCPD`` when it cannot (another layout, another ruptures version) or when the
loaded function fails its check on a tiny signal with a known answer (``_behaves``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from logdoctor.detectors.robust import FloatArray
from logdoctor.stats.extload import guarded_function

_EXTENSION = "ruptures.detection._detection.ekcpd"


#: A tiny signal and its exact penalised segmentation (two steps of height 10, penalty 1, min_size 2).
_CHECK_SIGNAL, _CHECK_PEN, _CHECK_MIN, _CHECK_ENDS = (0.0,) * 4 + (10.0,) * 3 + (-5.0,) * 3, 1.0, 2, [4, 7, 10]


@cache
def _compiled_pelt() -> Callable[..., Any] | None:
    """ruptures' compiled ``ekcpd_pelt_L2``, or None when it cannot be loaded on its own or fails its check."""
    return guarded_function(_EXTENSION, "ekcpd_pelt_L2", _behaves)


def _behaves(pelt: Callable[..., Any]) -> bool:
    """Whether ``pelt(x, pen, min_size)`` returns the back-pointer path this module reads, with the
    known answer on a tiny signal (the signature and the meaning of ruptures 1.1's function)."""
    x = np.asarray(_CHECK_SIGNAL, dtype=np.double).reshape(-1, 1)
    path = np.asarray(pelt(x, _CHECK_PEN, _CHECK_MIN))
    return path.shape == (x.shape[0] + 1,) and _ends(path, x.shape[0]) == _CHECK_ENDS


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
    return _ends(pelt(x, float(pen), min_size), n)


def _ends(path: Any, n: int) -> list[int]:
    """Segment ends read back from the search's path (``path[i]``: start of the segment ending at i)."""
    ends: list[int] = []
    i = n
    while 0 < i <= n and len(ends) <= n:  # a wrong path cannot loop forever
        ends.append(i)
        i = int(path[i])
    return ends[::-1]
