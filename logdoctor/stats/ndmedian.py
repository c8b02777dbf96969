"""scipy.ndimage's compiled 1-D median filter, loaded alone (without ``import scipy.ndimage``).

``scipy.ndimage.median_filter`` on a 1-D float64 series runs one C++ function,
``scipy.ndimage._rank_filter_1d.rank_filter``, which needs only numpy. Importing scipy.ndimage to
reach it also imports scipy.special and scipy's array-API layer (~0.17-0.25 s per process, paid
again by every ``--jobs`` worker). This module loads that extension from the installed scipy by its
file, as kernelcpd.py does for ruptures, and answers None when it cannot (another layout, another
scipy version), when it fails its check on a tiny series against numpy's median (``_behaves``), or
when scipy itself would take its general n-D path; the caller then uses ndimage.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from logdoctor.stats.extload import guarded_function

_EXTENSION = "scipy.ndimage._rank_filter_1d"
#: scipy.ndimage's boundary mode -> the code its filters take (``_ni_support._extend_mode_to_code``)
_MODE_CODE = {"nearest": 0, "wrap": 1, "reflect": 2, "mirror": 3}
#: the same modes as numpy.pad names them (the check's reference)
_NUMPY_PAD = {"nearest": "edge", "wrap": "wrap", "reflect": "symmetric", "mirror": "reflect"}


#: A tiny series for the check: unsorted, with a repeated value and a minimum at an edge.
_CHECK_SERIES = (3.0, 1.0, 2.0, 5.0, 4.0, 4.0, 0.0, 9.0)


@cache
def _rank_filter() -> Callable[..., Any] | None:
    """scipy's compiled 1-D ``rank_filter``, or None when it cannot be loaded on its own or fails its check."""
    return guarded_function(_EXTENSION, "rank_filter", _behaves)


def _behaves(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` fills ``out`` with the centred median of every window of a tiny series, in
    each boundary mode, as numpy's median of the padded windows (the signature of scipy 1.17)."""
    x = np.asarray(_CHECK_SERIES)
    for mode, code in _MODE_CODE.items():
        for size in (3, 5):
            out = np.full_like(x, np.nan)
            fn(x, size // 2, size, out, code, 0.0, 0)
            padded = np.pad(x, size // 2, mode=_NUMPY_PAD[mode])  # type: ignore[call-overload]
            want = np.median(np.lib.stride_tricks.sliding_window_view(padded, size), axis=1)
            if not np.array_equal(out, want):
                return False
    return True


def median_filter(x: NDArray[np.float64], size: int, mode: str) -> NDArray[np.float64] | None:
    """``scipy.ndimage.median_filter(x, size=size, mode=mode)`` for a 1-D series and an odd
    ``size`` from 3 to ``len(x)``, or None when the compiled filter is not available for this input."""
    fn = _rank_filter()
    code = _MODE_CODE.get(mode)
    # scipy itself sends size 1 to another filter, and windows longer than the series are its
    # corner cases (gh-23293: wrong values there): both stay with the caller's other paths
    if fn is None or code is None or x.ndim != 1 or size % 2 == 0 or not 3 <= size <= x.size:
        return None
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty_like(x)
    try:
        fn(x, size // 2, size, out, code, 0.0, 0)
    except (TypeError, ValueError, RuntimeError):
        return None
    return out
