"""Each sample's length, from the data set without loading a batch: given, a ``lengths`` attribute,
a column, or each sample's token ids."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from logdoctor.errors import ConfigError
from logdoctor.probing.feed import Feed
from logdoctor.probing.usercode import call

#: The feature HF's LengthGroupedSampler measures by default.
DEFAULT_KEY = "input_ids"


@dataclass(frozen=True, slots=True)
class LengthTable:
    """Sample lengths by index: an array, or a function of the index (asked once per index).

    Attributes:
        values: length of sample ``i`` at ``values[i]``.
        fn: a function of the index instead of ``values``.
        source: where the lengths came from, in words.
    """

    values: np.ndarray | None = None
    fn: Callable[[int], int] | None = None
    source: str = ""

    def of(self, idx: np.ndarray) -> np.ndarray:
        """The lengths of the samples ``idx``.

        Raises:
            ConfigError: an index the lengths do not cover.
        """
        if self.values is not None:
            if idx.size and (int(idx.max()) >= self.values.size or int(idx.min()) < 0):
                bad = int(idx.max()) if int(idx.max()) >= self.values.size else int(idx.min())
                raise ConfigError(
                    f"the sampler drew sample {bad}, but the lengths ({self.source}) cover {self.values.size} samples"
                )
            return self.values[idx]
        return np.fromiter((self._call(int(i)) for i in idx), dtype=np.int64, count=idx.size)

    def _call(self, i: int) -> int:
        fn = self.fn
        if fn is None:
            raise ConfigError("a LengthTable needs values or a function")
        return call("the lengths function", lambda: int(fn(i)))


#: What ``lengths=`` may be: per-sample lengths indexed by sample index, a function of the index,
#: a lengths file (one per line, or a CSV/JSONL/Parquet/Arrow column), or a table already read.
LengthsGiven = Sequence[int] | np.ndarray | Callable[[int], int] | str | Path | LengthTable


def _as_lengths(values: Any, source: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.dtype.kind not in "iuf" or (arr.size and (arr.min() < 0 or np.any(arr != np.round(arr)))):
        raise ConfigError(f"lengths ({source}) must be non-negative integers, one per sample")
    return arr.astype(np.int64)


def _sized(dataset: Any) -> int | None:
    try:
        return len(dataset) if dataset is not None else None
    except TypeError:
        return None


def _attribute(feed: Feed) -> LengthTable | None:
    """A ``lengths`` attribute along the chain or on the data set (HF LengthGroupedSampler has one)."""
    n = _sized(feed.dataset)
    for obj in (*feed.samplers, feed.dataset):
        values = getattr(obj, "lengths", None)
        if values is None or callable(values) or isinstance(values, str):
            continue
        try:
            arr = _as_lengths(values, f"{type(obj).__name__}.lengths")
        except (ConfigError, TypeError, ValueError):
            continue
        if n is None or arr.size == n:
            return LengthTable(arr, source=f"{type(obj).__name__}.lengths")
    return None


def _column(dataset: Any, key: str, n: int) -> LengthTable | None:
    """A data set's column (HF ``datasets``): its values when they are lengths, else each value's length."""
    names = getattr(dataset, "column_names", None)
    if not isinstance(names, list) or key not in names:
        return None
    col = list(call(f"reading column {key!r}", lambda: dataset[key]))
    if col and isinstance(col[0], int | np.integer):
        return LengthTable(_as_lengths(col, f"column {key!r}"), source=f"column {key!r}")
    return LengthTable(np.fromiter((len(v) for v in col), np.int64, count=len(col)), source=f"len() of column {key!r}")


def _per_sample(dataset: Any, key: str | None, n: int) -> LengthTable | None:
    """``len(dataset[i][key])`` (or ``len(dataset[i])`` for a sequence of token ids) for every sample,
    as HF's LengthGroupedSampler measures them; None when the samples are neither."""
    first = call("dataset[0]", lambda: dataset[0])
    if isinstance(first, Mapping):
        name = key or DEFAULT_KEY
        if name not in first:
            if key is not None:
                raise ConfigError(f"the data set's samples have no {key!r} (keys: {', '.join(map(str, first))})")
            return None
        values = call("reading sample lengths", lambda: [len(dataset[i][name]) for i in range(n)])
        return LengthTable(np.asarray(values, dtype=np.int64), source=f"len(dataset[i][{name!r}])")
    shape = getattr(first, "shape", None)
    if key is None and (
        (shape is not None and len(shape) == 1) or (isinstance(first, list) and first and isinstance(first[0], int))
    ):
        values = call("reading sample lengths", lambda: [len(dataset[i]) for i in range(n)])
        return LengthTable(np.asarray(values, dtype=np.int64), source="len(dataset[i])")
    if key is not None:
        raise ConfigError(f"--length-key {key}: the data set's samples are {type(first).__name__}, not dicts")
    return None


def given_table(given: LengthsGiven, column: str | None = None) -> LengthTable:
    """The lengths the user gave: a file (``column``: its length column, when it has several), an
    array, or a function of the sample index."""
    if isinstance(given, LengthTable):
        return given
    if isinstance(given, str | Path):
        from logdoctor.buckets.lengths import read_lengths

        return LengthTable(read_lengths(str(given), column), source=f"--lengths {given}")
    if callable(given):
        return LengthTable(fn=given, source="the lengths function")
    return LengthTable(_as_lengths(given, "lengths="), source="lengths given")


def find(feed: Feed, given: LengthsGiven | None = None, key: str | None = None) -> LengthTable | None:
    """Sample lengths for ``feed``: given (``key`` then names a lengths file's column), else a column
    ``key``, else a ``lengths`` attribute, else each sample's ``input_ids`` (or the sample itself, a
    sequence of token ids); None when none is found (only batch composition can then be judged). A
    stream's lengths are read as it streams."""
    if given is not None:
        return given_table(given, key)
    if feed.stream:
        return None
    n = _sized(feed.dataset)
    if key is not None:
        if n is None:
            raise ConfigError("--length-key: the data set has no length, so its samples cannot be read up front")
        return _column(feed.dataset, key, n) or _per_sample(feed.dataset, key, n)
    found = _attribute(feed)
    if found is not None or not n or not hasattr(feed.dataset, "__getitem__"):
        return found
    return _column(feed.dataset, DEFAULT_KEY, n) or _per_sample(feed.dataset, None, n)
