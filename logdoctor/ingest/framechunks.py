"""Records gathered into frames chunk by chunk, so that a large history is never held as dicts whole.

``pl.from_dicts`` over every record at once infers each column's type from all of its values; a
chunk's frame infers it from the chunk's. The chunks are combined only where that provably gives
the same frame: every column holds one type in every chunk (a chunk where it is absent or all null
aside), or integers in some chunks and floats in others (``from_dicts`` reads both as floats, as the
relaxed concatenation casts them). Anything else (text in one chunk and numbers in another, nested
values of different shapes) returns None, and the caller reads the records whole as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import polars as pl

from logdoctor.ingest.limits import KeyBudget

#: Records per chunk: ~50 MB of decoded dicts at ten keys a record.
CHUNK = 50_000


class FrameChunks:
    """Collect records (dicts) and turn every ``chunk`` of them into a frame as they come."""

    def __init__(self, *, strict: bool, chunk: int | None = None, budget: KeyBudget | None = None) -> None:
        self._strict = strict
        #: the key budget the records are cut to, chunk by chunk (its note says when it bit)
        self.budget = budget
        self._chunk = chunk or CHUNK
        self._rows: list[dict[str, Any]] = []
        self._frames: list[pl.DataFrame] = []
        self.count = 0

    def add(self, row: dict[str, Any]) -> None:
        """One record; a full chunk becomes a frame."""
        self._rows.append(row)
        self.count += 1
        if len(self._rows) >= self._chunk:
            self._flush()

    def extend(self, rows: Iterable[dict[str, Any]]) -> None:
        """Several records."""
        for row in rows:
            self.add(row)

    def _flush(self) -> None:
        if self._rows:
            rows = self.budget.prune(self._rows) if self.budget is not None else self._rows
            self._frames.append(pl.from_dicts(rows, infer_schema_length=None, strict=self._strict))
            self._rows = []

    def frame(self) -> pl.DataFrame | None:
        """The records as ``pl.from_dicts`` would read them all at once; None when the chunks'
        types do not combine to exactly that (see the module's docstring). An empty frame without records."""
        self._flush()
        frames, self._frames = self._frames, []
        if not frames:
            return pl.DataFrame()
        if len(frames) == 1:
            return frames[0]
        types: dict[str, set[pl.DataType]] = {}
        for f in frames:
            for name, dtype in f.schema.items():
                types.setdefault(name, set()).add(dtype)
        for seen in types.values():
            seen.discard(pl.Null())
            if len(seen) > 1 and seen != {pl.Int64(), pl.Float64()}:
                return None
        return pl.concat(frames, how="diagonal_relaxed", rechunk=True)
