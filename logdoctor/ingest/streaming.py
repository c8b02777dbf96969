"""Bounded-memory ingest: logs larger than the memory budget are parsed in line-aligned chunks.

``parse_large`` decides from the (decompressed) size whether a log fits the in-memory limit of
the budget (see ``logdoctor.ingest.memory``). When it does not, the log is read in chunks of complete
lines, each parsed by the parser sniffed from the head of the log, with the lines before the
first step (a CSV header, a banner) put in front of every chunk; line numbers stay those of the
file; what the chunks state beyond their rows (markers, events, plans) is merged in file lines
(``ChunkFacts``), so the answer is the whole read's. When the step rows would outgrow the row budget, they
are reduced to per-block aggregates (``reduce.BlockReducer``) and the run's notes say so.
Whole-document formats (trainer_state.json) larger than the limit are refused with a one-line error.
"""

from __future__ import annotations

import bz2
import dataclasses
import lzma
import zlib
from collections.abc import Callable, Iterator
from typing import BinaryIO

import polars as pl

from logdoctor.errors import InputError, ParseError
from logdoctor.ingest import memory
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.chunks import WHOLE_DOCUMENT, ChunkParser
from logdoctor.ingest.parsers import Parser, ParseResult, get_parser, sniff
from logdoctor.ingest.reduce import BlockReducer
from logdoctor.ingest.sources import HEAD_BYTES, Source, prefixed
from logdoctor.model import LINE_NO

#: A line longer than this many chunks is handed to the parser in pieces.
MAX_LINE_CHUNKS = 4
_READ_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError)


def _decompressed(source: Source) -> BinaryIO:
    """The source's decompressed bytes as a stream (never read whole)."""
    raw: BinaryIO
    if source.stream is not None:
        raw = source.stream
    elif source.path is not None:
        try:
            raw = source.path.open("rb")
        except OSError as err:
            raise InputError(f"{source.name}: cannot read ({err.strerror or err})") from None
    else:
        raise InputError(f"{source.name}: standard input was already consumed")
    kind = source.compression
    if kind == "gzip":
        import gzip  # here: a plain log needs no gzip module

        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if kind == "bz2":
        return bz2.BZ2File(raw, "rb")  # type: ignore[return-value]
    if kind == "xz":
        return lzma.LZMAFile(raw, "rb")  # type: ignore[return-value]
    if kind == "zstd":
        try:
            import zstandard
        except ImportError:
            raise InputError(
                f"{source.name}: zstd-compressed; install the extra with: pip install 'logdoctor[zstd]'"
            ) from None
        return zstandard.ZstdDecompressor().stream_reader(raw)  # type: ignore[no-any-return,unused-ignore]
    return raw


def _read(stream: BinaryIO, n: int, name: str) -> bytes:
    """Read up to ``n`` bytes; ``name`` is "<input>: <compression>" for the error message."""
    try:
        return stream.read(n)
    except _READ_ERRORS as err:
        raise InputError(f"{name} data is corrupt or truncated ({err})") from None
    except Exception as err:  # zstandard.ZstdError does not derive from a stdlib base
        if type(err).__module__.startswith("zstandard"):
            raise InputError(f"{name} data is corrupt or truncated ({err})") from None
        raise


def _read_upto(stream: BinaryIO, n: int, name: str) -> bytes:
    """Read ``n`` bytes or up to the end, in pieces (a single huge read may reserve ``n`` bytes)."""
    parts: list[bytes] = []
    got = 0
    while got < n and (part := _read(stream, min(n - got, memory.MIN_CHUNK * 16), name)):
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def iter_chunks(stream: BinaryIO, size: int, name: str) -> Iterator[bytes]:
    """Blocks of about ``size`` bytes that end at a line end, never inside an indented record block
    (the last one may not).

    ``name`` ("<input>: <compression>") names the input in a read error.

    A line longer than ``MAX_LINE_CHUNKS * size`` is handed over in pieces of that size.
    """
    carry = b""
    while block := _read(stream, size, name):
        buf = carry + block
        cut = _record_end(buf)
        if len(buf) - cut > size:  # a record block longer than a chunk: cut at its last line end
            cut = buf.rfind(b"\n")
        if cut < 0:
            carry = b"" if len(buf) >= MAX_LINE_CHUNKS * size else buf
            if not carry:
                yield buf
            continue
        carry = buf[cut + 1 :]
        yield buf[: cut + 1]
    if carry:
        yield carry


def _record_end(buf: bytes) -> int:
    """Where to cut ``buf`` (the index of a line end; -1 when it holds none): before the lines
    that continue a record (indented: OLMo's and Coqui's metric blocks under their step line), so
    that no chunk ends inside a record, unless every line of ``buf`` is indented."""
    last = buf.rfind(b"\n")
    cut = last
    while cut >= 0 and buf[cut + 1 : cut + 2] in (b" ", b"\t"):
        cut = buf.rfind(b"\n", 0, cut)
    return cut if cut >= 0 else last


def _oversized(source: Source, limit: int) -> tuple[bytes, BinaryIO] | None:
    """None when the log fits ``limit`` bytes (its bytes are then cached in the source); else its
    first (decompressed) bytes and the decompressed stream of the rest."""
    if source.is_dir or source._data is not None:
        return None
    if source.stream is None and source.compression is None and source.path is not None:
        try:
            if source.path.stat().st_size <= limit:
                return None
        except OSError as err:
            raise InputError(f"{source.name}: cannot access ({err.strerror or err})") from None
    stream = _decompressed(source)
    # at least the head that the whole read sniffs the format from, however small the limit
    head = _read_upto(stream, max(limit + 1, HEAD_BYTES), f"{source.name}: {source.compression or 'raw'}")
    if len(head) <= limit:
        source._data, source.stream = head, None
        return None
    return head, stream


def _stream_parse(
    parser: Parser,
    stream: BinaryIO,
    name: str,
    fields: FieldMap,
    total: int,
    kind: str,
    on_rows: Callable[[pl.DataFrame], None] | None = None,
) -> ParseResult:
    chunks = ChunkParser(name, fields)
    chunks.parser = parser  # sniffed by the caller, which also refused whole-document formats
    reducer = BlockReducer(memory.row_budget(total))
    evals: list[pl.DataFrame] = []
    aliases: dict[str, str] = {}
    notes: dict[str, None] = {}
    steps_total: int | None = None
    stated: int | None = None
    for data in iter_chunks(stream, memory.chunk_bytes(total), f"{name}: {kind}"):
        chunks.result = None
        table, chunk_evals = chunks.parse(data if data.endswith(b"\n") else data + b"\n")
        part = chunks.result
        if part is None:
            continue
        if on_rows is not None and table.height:
            on_rows(table.sort(LINE_NO))
        reducer.add(table)
        if chunk_evals.height and sum(e.height for e in evals) < memory.row_budget(total):
            evals.append(chunk_evals)
        aliases.update(part.aliases)
        notes.update(dict.fromkeys(part.notes))
        steps_total = max(steps_total or 0, part.total_steps or 0) or None
        stated = stated or part.steps_per_epoch
    if reducer.rows == 0:
        raise ParseError(f"{name}: no training steps found in {chunks.lines} lines (read in chunks)")
    table, reduce_notes = reducer.finish()
    size = memory.in_memory_limit(total)
    dropped = ", extra columns dropped" if reducer.k > 1 else ""
    notes[
        f"log larger than the in-memory limit ({memory.human(size)} of a {memory.human(total)} "
        f"memory budget): read in chunks{dropped}"
    ] = None
    spe = stated or (reducer.steps_per_epoch if reducer.k > 1 else None)
    # what the chunks stated beyond their rows (markers, events, plans, config) in file lines, as
    # the whole read states it
    stated_facts = chunks.facts.result(
        table, pl.concat(evals, how="diagonal_relaxed") if evals else pl.DataFrame(), chunks.lines, chunks.skipped
    )
    return dataclasses.replace(
        stated_facts,
        steps_per_epoch=spe,
        total_steps=steps_total or stated_facts.total_steps,
        aliases={**stated_facts.aliases, **aliases},
        notes=(*dict.fromkeys((*stated_facts.notes, *notes)), *reduce_notes),
    )


def parse_large(
    source: Source,
    fields: FieldMap,
    total: int,
    fmt: str | None = None,
    on_rows: Callable[[pl.DataFrame], None] | None = None,
) -> tuple[ParseResult, str] | None:
    """Parse a log that does not fit the in-memory limit of a ``total``-byte budget, in chunks.

    ``on_rows`` sees every chunk's step rows in file order before they are reduced (what needs
    the records one by one, such as the stuck-counter rule, is computed there).

    Returns None when it fits (the caller parses it whole); else (ParseResult, parser name).

    Raises:
        InputError: unreadable or corrupt data, binary content, or a whole-document format that is
            larger than the limit.
        ParseError: no training step in the whole log.
    """
    limit = memory.in_memory_limit(total)
    opened = _oversized(source, limit)
    if opened is None:
        return None
    head, rest = opened
    sniffed = Source(name=source.name, path=None, _data=head[:HEAD_BYTES])
    parser = get_parser(fmt) if fmt else sniff(sniffed)
    if parser.name in WHOLE_DOCUMENT:
        raise InputError(
            f"{source.name}: a {parser.name} document larger than {memory.human(limit)} (the in-memory "
            f"limit of a {memory.human(total)} budget); raise it with --max-memory or ${memory.ENV_VAR}"
        )
    kind = source.compression or "raw"
    return _stream_parse(parser, prefixed(head, rest), source.name, fields, total, kind, on_rows), parser.name
