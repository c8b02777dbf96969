"""Read one batch: its sample indices as an int64 array, whatever the sampler yields them as."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from logdoctor.errors import ConfigError


class BadBatch(ConfigError):
    """The sampler yielded something that is not a batch of sample indices."""


def _scalar(item: Any) -> bool:
    """A single sample index (int, numpy integer, 0-d tensor or array)."""
    if isinstance(item, bool):
        return False
    if isinstance(item, int | np.integer):
        return True
    shape = getattr(item, "shape", None)
    return shape is not None and tuple(shape) == ()


def indices(batch: Any) -> np.ndarray:
    """A batch's sample indices (a list, tuple, array or tensor of integers) as a 1-D int64 array.

    Raises:
        BadBatch: anything else, named (a dict of tensors means the loader was iterated, not its sampler).
    """
    try:
        arr = np.asarray(batch)
    except (TypeError, ValueError, RuntimeError):
        arr = np.asarray([], dtype=object)
    if arr.dtype.kind in "iu" and arr.ndim == 1 and arr.size:
        return arr.astype(np.int64, copy=False)
    if arr.dtype.kind == "f" and arr.ndim == 1 and arr.size and np.all(arr == np.round(arr)):
        return arr.astype(np.int64)
    kind = type(batch).__name__
    raise BadBatch(
        f"the sampler yielded a {kind}{f' of shape {arr.shape}' if arr.ndim > 1 else ''} where a batch "
        "of sample indices (a list of ints) was expected"
    )


def index_batches(items: Iterable[Any], batch_size: int | None, drop_last: bool = False) -> Iterator[np.ndarray]:
    """Batches of indices from a sampler: its batches as they are, or its single indices cut into
    batches of ``batch_size`` (the last one short unless ``drop_last``), as a DataLoader cuts them."""
    buffer: list[int] = []
    for item in items:
        if _scalar(item):
            if batch_size is None:
                raise ConfigError("the sampler yields single indices and states no batch size: give --batch-size N")
            buffer.append(int(item))
            if len(buffer) == batch_size:
                yield np.asarray(buffer, dtype=np.int64)
                buffer = []
            continue
        yield indices(item)
    if buffer and not drop_last:
        yield np.asarray(buffer, dtype=np.int64)


class StreamIds:
    """Identity and length of the samples an IterableDataset streams (it has no indices): a sample
    is known by its content, so a sample streamed again in a later epoch gets the same id.

    Args:
        length_key: for dict samples, the feature whose ``len()`` is the length (``input_ids``).
    """

    def __init__(self, length_key: str | None = None) -> None:
        self.length_key = length_key or "input_ids"
        self._ids: dict[bytes, int] = {}

    def _tokens(self, item: Any) -> Any:
        if isinstance(item, Mapping):
            if self.length_key not in item:
                raise ConfigError(
                    f"the IterableDataset's samples have no {self.length_key!r} (keys: "
                    f"{', '.join(map(str, item))}); give --length-key KEY"
                )
            return item[self.length_key]
        return item

    def batch(self, items: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        """(ids, lengths) of a batch of streamed samples."""
        ids, lengths = np.empty(len(items), np.int64), np.empty(len(items), np.int64)
        for k, item in enumerate(items):
            tokens = self._tokens(item)
            try:
                arr = np.asarray(tokens)
                key = arr.dtype.str.encode() + arr.tobytes() if arr.dtype != object else repr(tokens).encode()
                lengths[k] = len(tokens)
            except TypeError:
                raise ConfigError(
                    f"a streamed sample is a {type(tokens).__name__} without a length; give "
                    "--length-key KEY (the feature holding the token ids)"
                ) from None
            digest = hashlib.blake2b(key, digest_size=16).digest()
            ids[k] = self._ids.setdefault(digest, len(self._ids))
        return ids, lengths


def stream_batches(dataset: Iterable[Any], batch_size: int | None, drop_last: bool = False) -> Iterator[list[Any]]:
    """An IterableDataset's samples cut into batches of ``batch_size``, as its DataLoader cuts them."""
    if batch_size is None:
        raise ConfigError(
            "a DataLoader over an IterableDataset with batch_size=None yields whatever the data set "
            "yields; give --batch-size N (samples per batch)"
        )
    buffer: list[Any] = []
    for item in dataset:
        buffer.append(item)
        if len(buffer) == batch_size:
            yield buffer
            buffer = []
    if buffer and not drop_last:
        yield buffer
