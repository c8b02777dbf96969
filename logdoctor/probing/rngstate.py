"""The global random generators around a probe: seeded only when asked, as they were afterwards."""

from __future__ import annotations

import contextlib
import random
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np


def seed_all(seed: int) -> None:
    """Seed Python's, numpy's global and (when loaded) torch's generators, as ``--seed`` asks."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


@contextlib.contextmanager
def preserved() -> Iterator[None]:
    """The global generators (Python's, numpy's, torch's CPU one when loaded) put back as they were
    once the block ends: probing a sampler from a test suite shifts no random stream of the caller's."""
    saved: list[tuple[Any, Any]] = [(random.setstate, random.getstate()), (np.random.set_state, np.random.get_state())]
    torch = sys.modules.get("torch")
    if torch is not None:
        saved.append((torch.set_rng_state, torch.get_rng_state()))
    try:
        yield
    finally:
        for restore, state in saved:
            restore(state)
