"""Memory an analysis frees kept for its next arrays (glibc), not handed back and faulted in again.

An analysis of a million steps allocates and frees hundreds of arrays of 8-32 MB. glibc hands such
blocks back to the kernel when they are freed (munmap, or a trim of the heap's top) and asks for
them again at the next allocation, whose pages the kernel then zeroes and faults in one by one: on
the 2-core VM of bench/RESULTS.md that churn was 1.5-3.5 s of system time of a 4-8 s analysis.
``M_TOP_PAD`` makes the heap grow in large steps and keep that much free memory at its top instead
of trimming it: the same analysis then spends 0.5-0.7 s in the kernel (the same report byte for
byte; peak RSS within a few percent). Only a whole batch command asks for it (logdoctor.__main__):
not ``tail``, whose resident memory would stay at its heavy passes' peak between them, nor a library
caller, whose process's allocator is its own business.
"""

from __future__ import annotations

import sys

#: glibc's mallopt() parameter number for M_TOP_PAD (malloc.h).
M_TOP_PAD = -2
#: Bytes added to each growth of the heap and kept free at its top when memory is freed.
TOP_PAD = 512 << 20


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep ``TOP_PAD`` bytes of freed memory; True when it agreed (False on
    another C library or system, where nothing changes)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes  # polars imports it anyway: no start-up cost

        mallopt = ctypes.CDLL(None).mallopt  # the C library the interpreter runs on
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_TOP_PAD, TOP_PAD))
