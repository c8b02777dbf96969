"""Lines read but not parsed yet: a busy writer's appends gathered into fewer, larger parses.

Parsing a chunk costs mostly a fixed per-call price (the batch parser's frames), not its lines:
ten lines cost nearly what two hundred do. So the follow loop hands a file's new lines to its
session once ``gap`` seconds have gathered, not at every read, except for lines that may hold a
non-finite value (a NaN is reported at once) and the first content of a file (its format).
"""

from __future__ import annotations

import math
import re

#: A token that may read as a non-finite number: nan / inf / infinity as a word (not "info"), or
#: an exponent of three digits (1e400 overflows to inf). Over-matching only parses sooner.
NONFINITE = re.compile(rb"(?i)(?<![a-z])(?:nan|inf|infinity)(?![a-z])|[0-9][eE]\+?[0-9]{3}")


class Pending:
    """The lines of one file read since its last parse, and when the first of them came."""

    def __init__(self, *, gap: float = 1.0, max_bytes: int = 1 << 20) -> None:
        self.gap = gap
        self.max_bytes = max_bytes
        self._parts: list[bytes] = []
        self._size = 0
        self._since = math.inf
        self._urgent = False

    def __len__(self) -> int:
        return self._size

    def add(self, data: bytes, now: float) -> None:
        """Keep ``data`` (complete lines) read at ``now`` (monotonic seconds)."""
        if not data:
            return
        if not self._parts:
            self._since = now
        self._parts.append(data)
        self._size += len(data)
        self._urgent = self._urgent or NONFINITE.search(data) is not None

    def due(self, now: float) -> bool:
        """True when the lines kept should be parsed now: ``gap`` seconds gathered, a possible
        non-finite value among them, or ``max_bytes`` kept."""
        if not self._parts:
            return False
        return self._urgent or self._size >= self.max_bytes or now - self._since >= self.gap

    def wait(self, now: float) -> float:
        """Seconds until the lines kept are due (inf when none are kept)."""
        return max(0.0, self._since + self.gap - now) if self._parts else math.inf

    def take(self) -> bytes:
        """The lines kept, in order; nothing is kept after."""
        data = b"".join(self._parts)
        self._parts, self._size, self._since, self._urgent = [], 0, math.inf, False
        return data
