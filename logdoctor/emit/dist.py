"""Combine the ranks' records into the global batch (torch.distributed, imported only when running)."""

from __future__ import annotations

import sys
from typing import Any, TypeVar

T = TypeVar("T")


def _dist() -> Any:
    """torch.distributed when a process group is running, else None (torch never imported here)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    dist = torch.distributed
    return dist if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1 else None


def gather(items: list[T]) -> list[T]:
    """Every rank's items, rank 0's first (a collective: call it on every rank the same number
    of times). Without a process group (one process) the items come back unchanged."""
    dist = _dist()
    if dist is None:
        return items
    out: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, items)
    return [item for part in out for item in part]


def is_rank_zero() -> bool:
    """Whether this process writes (rank 0, or the only process)."""
    dist = _dist()
    return dist is None or dist.get_rank() == 0
