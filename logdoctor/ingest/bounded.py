"""Bounded work on degenerate line logs: read a log through the line filter when it needs it.

A plain file is scanned first in blocks (nothing kept): a log without NUL runs or over-long lines is
then read exactly as before. Otherwise (and always for standard input, FIFOs and compressed logs,
which are read once) the log is read through ``LineFilter``: the head is read to sniff the format,
then the rest, in blocks of at most the line limit. Whole JSON documents (trainer_state.json, a
JSON array) keep their lines whole; binary formats (W&B, TensorBoard) are never filtered.
What was skipped or cut is written into the run's metadata and notes (``describe``).
"""

from __future__ import annotations

import dataclasses
import io
import os
from collections.abc import Iterator
from typing import BinaryIO

from logdoctor.errors import InputError
from logdoctor.ingest import memory
from logdoctor.ingest.linefilter import MAX_LINE_BYTES, MIN_NUL_RUN, LineFilter, needs_filter
from logdoctor.ingest.parsers import get_parser, sniff
from logdoctor.ingest.sources import HEAD_BYTES, Source, prefixed
from logdoctor.ingest.streaming import _decompressed, _read
from logdoctor.model import RunMeta

ENV_VAR = "LOGDOCTOR_MAX_LINE"
#: Formats read line by line, whose lines may be cut.
LINE_FORMATS = frozenset({"text", "jsonl", "csv"})
#: Formats read as bytes of their own (never filtered).
BINARY_FORMATS = frozenset({"wandb", "tensorboard"})
_MAX_BLOCK = 1024 * 1024


def max_line_bytes(override: int | None = None) -> int:
    """The line limit: ``override``, else $LOGDOCTOR_MAX_LINE (a size such as 1M), else 1 MiB."""
    if override is not None:
        return max(1, override)
    text = os.environ.get(ENV_VAR)
    return memory.parse_size(text) if text else MAX_LINE_BYTES


def _blocks(stream: BinaryIO, size: int, name: str) -> Iterator[bytes]:
    while block := _read(stream, size, name):
        yield block


class _Chunks(io.RawIOBase):
    """A read-only raw stream over an iterator of byte strings."""

    def __init__(self, parts: Iterator[bytes]) -> None:
        self._parts = parts
        self._left = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buf: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._left.nbytes:
            part = next(self._parts, None)
            if part is None:
                return 0
            self._left = memoryview(part)
        n = min(len(buf), self._left.nbytes)
        buf[:n] = self._left[:n]
        self._left = self._left[n:]
        return n


def _is_clean(source: Source, max_line: int, min_nul: int) -> bool:
    """A plain file without NUL runs or over-long lines (scanned, not kept)."""
    if source._data is not None or source.stream is not None or source.compression or source.path is None:
        return False
    try:
        with source.path.open("rb") as fh:
            return not needs_filter(_blocks(fh, min(max_line, _MAX_BLOCK), source.name), max_line, min_nul)
    except OSError as err:
        raise InputError(f"{source.name}: cannot read ({err.strerror or err})") from None


def _decide(filt: LineFilter, head: bytes, name: str, fmt: str | None) -> str:
    """The format (forced or sniffed from the filtered head); sets whether lines are cut."""
    if not head.strip() and filt.runs:
        raise InputError(f"{name}: holds nothing but NUL bytes ({describe_nuls(filt)})")
    parser = get_parser(fmt) if fmt else sniff(Source(name=name, path=None, _data=head))
    document = parser.name == "hf_trainer_state" or head.lstrip()[:1] == b"["
    filt.cut = parser.name in LINE_FORMATS and not document
    return parser.name


def open_bounded(
    source: Source, fmt: str | None, limit: int, max_line: int | None = None, min_nul: int = MIN_NUL_RUN
) -> tuple[Source, LineFilter | None]:
    """``source`` itself when it needs no filter, else a Source over the filtered bytes (whole when
    they fit ``limit`` bytes, else a stream) and the filter, whose counts are final once read."""
    line = max_line_bytes(max_line)
    if source.is_dir or _is_clean(source, line, min_nul):
        return source, None
    raw: BinaryIO = io.BytesIO(source._data) if source._data is not None else _decompressed(source)
    filt = LineFilter(line, min_nul, cut=None)
    blocks = _blocks(raw, min(line, _MAX_BLOCK), f"{source.name}: {source.compression or 'raw'}")
    head: list[bytes] = []
    size = 0
    for block in blocks:
        for part in filt.feed(block):
            head.append(part)
            size += len(part)
        if size >= HEAD_BYTES:
            break
    else:
        head += filt.finish()
        blocks = iter(())
    first = b"".join(head)
    if _decide(filt, first[:HEAD_BYTES], source.name, fmt) in BINARY_FORMATS:
        if source.path is None:
            raise InputError(f"{source.name}: a binary log must be read from a path")
        return Source(name=source.name, path=source.path, compression=source.compression), None
    rest = io.BufferedReader(_Chunks(_filtered(filt, blocks)), _MAX_BLOCK)
    data = first + rest.read(limit + 1 - len(first)) if len(first) <= limit else first
    out = Source(name=source.name, path=source.path)
    if len(data) <= limit:
        out._data = data  # the whole filtered log: the filter's counts are final
    else:
        out.stream = prefixed(data, rest)
    return out, filt


def _filtered(filt: LineFilter, blocks: Iterator[bytes]) -> Iterator[bytes]:
    for block in blocks:
        yield from filt.feed(block)
    yield from filt.finish()


def describe_nuls(filt: LineFilter) -> str:
    """``2.0 GiB of NUL bytes skipped at offset 1,234`` (every run named, up to five)."""
    runs = filt.runs
    total = filt.nul_bytes
    where = ", ".join(f"{memory.human(r.size)} at offset {r.offset:,}" for r in runs[:5])
    count = len(runs) + filt.more_runs
    if count == 1:
        return f"{memory.human(total)} of NUL bytes skipped at offset {runs[0].offset:,} ({total:,} bytes)"
    more = f" and {count - 5} more" if count > 5 else ""
    return f"{memory.human(total)} of NUL bytes skipped in {count} runs ({total:,} bytes): {where}{more}"


def describe(meta: RunMeta, filt: LineFilter | None) -> RunMeta:
    """The run's metadata with what the filter skipped and cut (counts and notes)."""
    if filt is None or not filt.changed:
        return meta
    notes = list(meta.notes)
    if filt.runs:
        notes.append(describe_nuls(filt))
    if filt.lines_cut:
        notes.append(
            f"{filt.lines_cut:,} line(s) longer than {memory.human(filt.max_line)} cut to their first "
            f"{memory.human(filt.max_line)} (limit: ${ENV_VAR})"
        )
    return dataclasses.replace(
        meta,
        notes=tuple(notes),
        lines_cut=filt.lines_cut,
        max_line=filt.max_line,
        nul_runs=tuple(filt.runs),
        nul_bytes=filt.nul_bytes,
    )
