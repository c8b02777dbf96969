"""Open an input (file, directory, compressed file or standard input) read-only, as a Source."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

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
    """

    name: str
    path: Path | None
    is_dir: bool = False
    compression: str | None = None
    _data: bytes | None = field(default=None, repr=False)

    def read_bytes(self) -> bytes:
        """The whole (decompressed) content. Directories have none."""
        if self.is_dir:
            raise InputError(f"{self.name}: is a directory")
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


def open_source(name: str) -> Source:
    """Open ``name`` ("-" for standard input) for reading, never for writing.

    Raises:
        InputError: missing, unreadable, a special file we cannot read, or empty.
    """
    if name == "-":
        data = sys.stdin.buffer.read()
        comp = compression_of(data[:8])
        src = Source(name="<stdin>", path=None, compression=comp)
        src._data = _decompress(data, comp, "<stdin>") if comp else data
        return src
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
        with path.open("rb") as fh:
            # a FIFO can be read once only: take all of it now
            head = fh.read() if stat.S_ISFIFO(st.st_mode) else fh.read(8)
    except OSError as err:
        raise InputError(f"{name}: cannot read ({err.strerror or err})") from None
    comp = compression_of(head[:8])
    src = Source(name=name, path=path, compression=comp)
    if stat.S_ISFIFO(st.st_mode):
        src._data = _decompress(head, comp, name) if comp else head
    return src
