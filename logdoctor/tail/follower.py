"""Follow one growing file: new complete lines only, across truncation and rename-and-recreate."""

from __future__ import annotations

import glob
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from logdoctor.errors import InputError
from logdoctor.ingest.linefilter import LineFilter
from logdoctor.ingest.memory import human
from logdoctor.ingest.sources import HEAD_BYTES
from logdoctor.model import Run

#: Most bytes one ``read`` returns; the rest waits for the next call (bounds memory on catch-up).
MAX_READ = 4 * 1024 * 1024
#: A "line" longer than this is passed on even without its newline (a runaway progress bar).
MAX_PARTIAL = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Chunk:
    """What one read produced.

    Attributes:
        data: complete lines (ending in a newline), possibly empty.
        restarted: "truncated" or "replaced" when the file started over before this data.
        more: the read stopped at its size limit: more bytes are waiting (read again at once).
    """

    data: bytes
    restarted: str | None = None
    more: bool = False
    #: something to say about the source (a server that failed and is retried), said once
    notice: str | None = None
    #: a whole document read again (tail/documents.py): the run as saved now
    run: Run | None = None


class FileFollower:
    """Reads only the bytes appended since the last call and hands out complete lines.

    Keeps the read offset and the partial last line. When the file shrinks below the offset
    (copytruncate) it starts again at 0; when the path points at a new inode (rename-and-recreate)
    it finishes reading the old handle, then reopens the path from its start.
    """

    def __init__(self, path: str, *, from_end: bool = False) -> None:
        self.path = path
        self.offset = 0
        # --from-end applies to a file that exists now; one that appears later is read whole
        self._from_end = from_end and os.path.isfile(path)
        self._sig = b""
        self._fh: BinaryIO | None = None
        self._ino: tuple[int, int] | None = None
        self._partial = b""
        self._skip_first_line = False
        self._opened_once = False
        self._full = False  # the last read filled MAX_READ
        self._nuls = LineFilter(cut=False)  # NUL runs skipped (a crash's zero-filled blocks)
        self._told = 0  # NUL runs already reported by ``skipped``

    @property
    def is_open(self) -> bool:
        """True once the file exists and is open."""
        return self._fh is not None

    def prefix(self) -> bytes:
        """The complete lines handed out so far, read again from the file (b"" after --from-end:
        the lines before the start were not read)."""
        if self._fh is None or self._from_end:
            return b""
        return os.pread(self._fh.fileno(), max(0, self.offset - len(self._partial)), 0)

    def head(self, n: int = HEAD_BYTES) -> bytes:
        """The first ``n`` bytes of the open file (for sniffing); the offset does not move."""
        if self._fh is None:
            return b""
        return os.pread(self._fh.fileno(), n, 0)

    def read(self) -> Chunk:
        """New complete lines since the last call (empty when nothing new or no file yet)."""
        restarted: str | None = None
        data = b""
        if self._fh is not None:
            replaced = self._replaced()
            if replaced:
                data = self._finish_old()
                self._close()
                restarted = "replaced"
        if self._fh is None and not self._open(first=not self._opened_once):
            return Chunk(self._lines(data), restarted)
        if self._truncated():
            self._partial, self._sig = b"", b""
            self.offset = 0
            self._restart_filter()
            restarted = "truncated"
        fresh = self.offset == 0
        new = self._read_available()
        if fresh:
            _refuse_compressed(self.path, new)
        data += b"".join(self._nuls.feed(new))
        return Chunk(self._lines(data), restarted, more=self._full)

    def skipped(self, *, final: bool = False) -> list[str]:
        """One line per NUL run skipped since the last call (offsets in the file); ``final``: the
        run still going at the end of the file too (a crash's zero-filled tail)."""
        runs = self._nuls.runs[self._told :]
        self._told += len(runs)
        pending = self._nuls.pending if final else None
        runs += [pending] if pending is not None else []
        return [f"{human(r.size)} of NUL bytes skipped at offset {r.offset:,} ({r.size:,} bytes)" for r in runs]

    def _restart_filter(self) -> None:
        self._nuls, self._told = LineFilter(cut=False, start=self.offset), 0

    def close(self) -> None:
        """Close the file handle."""
        self._close()

    def _open(self, *, first: bool) -> bool:
        """Open the path when it is a readable regular file; False while it does not exist (or
        is a directory, which the caller may follow as a run folder).

        Raises:
            InputError: a FIFO or other special file, a symlink loop, a file it may not read.
        """
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        except OSError as err:  # a symlink loop, a name too long, a parent it may not search
            raise InputError(f"{self.path}: cannot follow it ({err.strerror or err})") from None
        if stat.S_ISDIR(st.st_mode):
            return False
        if not stat.S_ISREG(st.st_mode):
            kind = "a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else "not a regular file"
            raise InputError(
                f"{self.path}: is {kind}; tail follows a file the trainer appends to "
                "(or pipe the output into `logdoctor analyze -`)"
            )
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - held across calls, closed in _close
        except FileNotFoundError:
            return False
        except OSError as err:
            raise InputError(f"{self.path}: cannot read it ({err.strerror or err})") from None
        st = os.fstat(fh.fileno())
        self._fh, self._ino = fh, (st.st_dev, st.st_ino)
        self.offset, self._sig = 0, b""
        if first and self._from_end and st.st_size:
            self.offset = st.st_size
            self._sig = os.pread(fh.fileno(), 32, max(0, st.st_size - 32))
            self._skip_first_line = os.pread(fh.fileno(), 1, st.st_size - 1) != b"\n"
        self._opened_once = True
        self._restart_filter()
        return True

    def _close(self) -> None:
        if self._fh is not None:
            self._fh.close()
        self._fh, self._ino = None, None

    def _replaced(self) -> bool:
        try:
            st = os.stat(self.path)
        except OSError:
            return False  # gone for now: keep reading the old handle until a new file appears
        return (st.st_dev, st.st_ino) != self._ino

    def _truncated(self) -> bool:
        """The file shrank below the offset, or was truncated and rewritten past it (the last
        bytes read no longer sit before the offset).
        """
        if self._fh is None:
            return False
        fd = self._fh.fileno()
        if os.fstat(fd).st_size < self.offset:
            return True
        return bool(self._sig) and os.pread(fd, len(self._sig), self.offset - len(self._sig)) != self._sig

    def _read_available(self, *, unbounded: bool = False) -> bytes:
        fh = self._fh
        if fh is None:
            return b""
        out = bytearray()
        while True:
            block = os.pread(fh.fileno(), MAX_READ, self.offset)
            self._full = len(block) == MAX_READ
            out += block
            self.offset += len(block)
            if block:
                self._sig = (self._sig + block)[-32:]
            if not block or not unbounded or len(block) < MAX_READ:
                return bytes(out)

    def _finish_old(self) -> bytes:
        """Everything left in the replaced file; its unterminated last line counts as complete."""
        tail = b"".join([*self._nuls.feed(self._read_available(unbounded=True)), *self._nuls.finish()])
        rest, self._partial = self._partial + tail, b""
        if rest and not rest.endswith(b"\n"):
            rest += b"\n"
        return rest

    def _lines(self, data: bytes) -> bytes:
        buf = self._partial + data
        if self._skip_first_line:
            nl = buf.find(b"\n")
            if nl < 0:
                self._partial = b""
                return b""
            buf, self._skip_first_line = buf[nl + 1 :], False
        cut = buf.rfind(b"\n") + 1
        complete, self._partial = buf[:cut], buf[cut:]
        if len(self._partial) > MAX_PARTIAL:
            complete, self._partial = complete + self._partial + b"\n", b""
        return complete


#: Magic bytes of compressed files: their appended bytes only decode as a whole.
_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}


def _refuse_compressed(path: str, head: bytes) -> None:
    for magic, kind in _MAGIC.items():
        if head.startswith(magic):
            raise InputError(
                f"{path}: a {kind}-compressed log cannot be followed as it grows "
                f"(use `logdoctor analyze {path}` once it is written)"
            )


def is_glob(pattern: str) -> bool:
    """True when the string holds glob magic (``*``, ``?`` or ``[``)."""
    return glob.has_magic(pattern)


def expand(patterns: list[str]) -> list[str]:
    """The files the patterns name now: literal paths as given (existing or not), globs expanded
    to their existing regular files, sorted, without repeats.
    """
    out: list[str] = []
    for p in patterns:
        found = sorted(f for f in glob.glob(p) if os.path.isfile(f)) if is_glob(p) else [p]
        out.extend(f for f in found if f not in out)
    return out


def watch_dirs(patterns: list[str]) -> dict[str, tuple[str, ...]]:
    """Directories to watch for the patterns and the file-name patterns that matter in each.

    A glob with magic in its directory part contributes nothing (its files' own directories are
    added once they exist, through ``expand``).
    """
    dirs: dict[str, set[str]] = {}
    for p in patterns + expand(patterns):
        parent, name = os.path.split(p)
        if is_glob(parent):
            continue
        d = str(Path(parent or ".").resolve())
        dirs.setdefault(d, set()).add(name)
    return {d: tuple(sorted(names)) for d, names in dirs.items()}
