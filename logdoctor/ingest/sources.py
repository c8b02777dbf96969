"""Open an input (file, directory, compressed file or standard input) read-only, as a Source."""

from __future__ import annotations

import bz2
import io
import lzma
import os
import stat
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from logdoctor.errors import InputError

HEAD_BYTES = 64 * 1024

_MAGIC = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bz2",
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
}


def compression_of(head: bytes) -> str | None:
    """The compression a byte prefix announces (gzip, bz2, xz, zstd), or None."""
    for magic, name in _MAGIC.items():
        if head.startswith(magic):
            return name
    return None


def _decompress(data: bytes, kind: str, name: str) -> bytes:
    try:
        if kind == "gzip":
            import gzip  # here: a plain log needs no gzip module

            return gzip.decompress(data)
        if kind == "bz2":
            return bz2.decompress(data)
        if kind == "xz":
            return lzma.decompress(data)
        try:
            import zstandard
        except ImportError:
            raise InputError(
                f"{name}: zstd-compressed; install the extra with: pip install 'logdoctor[zstd]'"
            ) from None
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    except InputError:
        raise
    except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError) as err:
        raise InputError(f"{name}: {kind} data is corrupt or truncated ({err})") from None
    except Exception as err:  # zstandard.ZstdError does not derive from a stdlib base
        if type(err).__module__.startswith("zstandard"):
            raise InputError(f"{name}: zstd data is corrupt or truncated ({err})") from None
        raise


@dataclass(slots=True)
class Source:
    """An input opened read-only. Bytes are decompressed and cached on first read.

    Attributes:
        name: the input as the user named it ("-" for standard input).
        path: the file-system path, or None for standard input.
        is_dir: True for a directory input (MLflow run folder, TensorBoard log dir).
        compression: the compression detected from the content, or None.
        stream: for standard input or a FIFO whose content was not read whole when opened (larger
            than the limit given to ``open_source``, or compressed): its raw bytes from the start.
    """

    name: str
    path: Path | None
    is_dir: bool = False
    compression: str | None = None
    _data: bytes | None = field(default=None, repr=False)
    stream: BinaryIO | None = field(default=None, repr=False)

    @classmethod
    def from_bytes(cls, name: str, data: bytes) -> Source:
        """A Source over bytes already in memory (decompressed when they carry a magic number).

        Tail mode uses this to hand each chunk of new complete lines to the batch parsers.
        """
        comp = compression_of(data[:8])
        raw = _decompress(data, comp, name) if comp else data
        return cls(name=name, path=None, compression=comp, _data=raw)

    def read_bytes(self) -> bytes:
        """The whole (decompressed) content. Directories have none."""
        if self.is_dir:
            raise InputError(f"{self.name}: is a directory")
        if self._data is None and self.stream is not None:
            try:
                raw = self.stream.read()
            except OSError as err:
                raise InputError(f"{self.name}: cannot read ({err.strerror or err})") from None
            self.stream = None
            self._data = _decompress(raw, self.compression, self.name) if self.compression else raw
        if self._data is None:
            if self.path is None:
                raise InputError(f"{self.name}: standard input was already consumed")
            try:
                raw = self.path.read_bytes()
            except OSError as err:
                raise InputError(f"{self.name}: cannot read ({err.strerror or err})") from None
            self._data = _decompress(raw, self.compression, self.name) if self.compression else raw
        return self._data

    def head_bytes(self, n: int = HEAD_BYTES) -> bytes:
        """The first ``n`` (decompressed) bytes, for format sniffing."""
        if self.is_dir:
            return b""
        return self.read_bytes()[:n]

    def head_text(self, n: int = HEAD_BYTES) -> str:
        """The first ``n`` bytes decoded as UTF-8 with undecodable bytes replaced."""
        return self.head_bytes(n).decode("utf-8", errors="replace")

    def text(self) -> str:
        """The whole content decoded as UTF-8 with undecodable bytes replaced."""
        return self.read_bytes().decode("utf-8", errors="replace")


class _Prefixed(io.RawIOBase):
    """A read-only raw stream: ``head`` (bytes already read), then the rest of ``fh``."""

    def __init__(self, head: bytes, fh: BinaryIO) -> None:
        self._head = memoryview(head)
        self._fh = fh

    def readable(self) -> bool:
        return True

    def readinto(self, buf: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head.nbytes:
            n = min(len(buf), self._head.nbytes)
            buf[:n] = self._head[:n]
            # an empty slice would still hold the whole head: let it go once read
            self._head = self._head[n:] if n < self._head.nbytes else memoryview(b"")
            return n
        data = self._fh.read(len(buf))
        buf[: len(data)] = data
        return len(data)


def prefixed(head: bytes, fh: BinaryIO) -> BinaryIO:
    """A buffered binary stream that yields ``head`` and then what is left in ``fh``."""
    return io.BufferedReader(_Prefixed(head, fh))


def open_stream(name: str, fh: BinaryIO, limit: int | None) -> Source:
    """Standard input, a FIFO or a remote file (read once): whole when small, else kept as a stream."""
    head = fh.read(limit + 1) if limit is not None else fh.read()
    comp = compression_of(head[:8])
    src = Source(name=name, path=None, compression=comp)
    if comp or (limit is not None and len(head) > limit):
        src.stream = prefixed(head, fh)
    else:
        src._data = head
    return src


def open_source(name: str, limit: int | None = None) -> Source:
    """Open ``name`` ("-" for standard input) for reading, never for writing.

    Args:
        name: a path, or "-" for standard input.
        limit: standard input or a FIFO larger than this many bytes (or compressed) is not read
            whole here: ``Source.stream`` holds it, for the caller to stream (see streaming).

    Raises:
        InputError: missing, unreadable, a special file we cannot read, or empty.
    """
    if name == "-":
        return open_stream("<stdin>", sys.stdin.buffer, limit)
    path = Path(name)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputError(f"{name}: no such file or directory") from None
    except OSError as err:
        raise InputError(f"{name}: cannot access ({err.strerror or err})") from None
    if stat.S_ISDIR(st.st_mode):
        if not os.access(path, os.R_OK | os.X_OK):
            raise InputError(f"{name}: permission denied")
        return Source(name=name, path=path, is_dir=True)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise InputError(f"{name}: not a regular file")
    try:
        fh = path.open("rb")
    except OSError as err:
        raise InputError(f"{name}: cannot read ({err.strerror or err})") from None
    if stat.S_ISFIFO(st.st_mode):  # readable once: the stream keeps the file open
        try:
            src = open_stream(name, fh, limit)
        except OSError as err:
            raise InputError(f"{name}: cannot read ({err.strerror or err})") from None
        src.path = path
        if src.stream is None:
            fh.close()
        return src
    with fh:
        try:
            head = fh.read(8)
        except OSError as err:
            raise InputError(f"{name}: cannot read ({err.strerror or err})") from None
    return Source(name=name, path=path, compression=compression_of(head))
