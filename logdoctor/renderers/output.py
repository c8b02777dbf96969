"""One helper owns every path the user names for output: what the path is decides how it is written.

- ``-`` is stdout;
- a regular file, or a path that does not exist yet, is written atomically (a temporary file in the
  same directory renamed into place): a failure never leaves a partial file; a symlink to a regular
  file is followed, the link kept and its target replaced;
- a character device, a FIFO or a terminal (``/dev/null``, ``/dev/stdout``, a named pipe) is written in
  place and never replaced; nothing under ``/dev`` or ``/proc`` is ever created;
- a directory, a block device, a socket, a symlink loop, an input of the same run: refused, one line.

Every failure is an :class:`OutputError` (one line, exit 2); a closed pipe on stdout stays the
BrokenPipeError it is, which the CLI reports the same way (``logdoctor check run.log | head``).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from logdoctor.errors import OutputError

#: Binary content written by a function into the stream it is given (a table's writer), so that
#: no copy of it is held in memory first.
Writer = Callable[[BinaryIO], None]

#: Folders whose entries are the system's, never files of ours: written in place or refused.
SYSTEM_DIRS = ("/dev/", "/proc/")


def _bytes(content: str | bytes | Writer) -> bytes:
    if callable(content):
        buf = io.BytesIO()
        content(buf)
        return buf.getvalue()
    # a lone surrogate a renderer let through (a file name that is not UTF-8) is shown, not fatal
    return content if isinstance(content, bytes) else content.encode("utf-8", "backslashreplace")


def write_all(fh: BinaryIO, data: bytes) -> None:
    """Write all of ``data`` and flush: a pipe whose reader leaves mid-write takes part of it and
    returns the count (no error); the next write meets the closed pipe (BrokenPipeError)."""
    view = memoryview(data)
    while view:
        n = fh.write(view)
        if not n:
            raise OSError(errno.EIO, "the output took nothing (short write)")
        view = view[n:]
    fh.flush()


def _why(err: OSError) -> str:
    return err.strerror or str(err)


def write_output(content: str | bytes | Writer, dest: str, *, inputs: Iterable[str] = ()) -> None:
    """Write ``content`` (text, bytes, or a Writer of binary content) to ``dest`` ("-" for stdout).

    Raises:
        OutputError: ``dest`` cannot or must not be written (see the module docstring).
        BrokenPipeError: stdout's reader went away.
    """
    if dest == "-":
        _to_stdout(content)
        return
    kind, where = classify(dest)
    if kind == "stream":
        _in_place(content, dest)
        return
    for name in inputs:
        if name not in ("-", "<stdin>") and _same_file(Path(name), where):
            raise OutputError(f"{dest}: refusing to overwrite an input file")
    _atomic(content, where, dest)


def classify(dest: str) -> tuple[str, Path]:
    """How ``dest`` is written: ``("stream", path)`` in place, or ``("file", real path)`` atomically.

    Raises:
        OutputError: ``dest`` is a directory, a block device, a socket, a symlink loop, or a new
            name under a system folder.
    """
    path = Path(dest)
    try:
        st = os.stat(path)  # follows symlinks: what the name leads to decides
    except FileNotFoundError:
        real = Path(os.path.realpath(path))
        if _system(str(path.absolute())) or _system(str(real)):
            raise OutputError(f"{dest}: no such device (nothing under /dev or /proc is created)") from None
        return "file", real  # a new name, or a dangling link: the file is made where the link points
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise OutputError(f"{dest}: refusing to write through a symlink loop") from None
        raise OutputError(f"{dest}: cannot write ({_why(err)})") from None
    mode = st.st_mode
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or (stat.S_ISREG(mode) and _system(str(path.absolute()))):
        return "stream", path  # a device, a pipe, a terminal, /dev/stdout redirected to a file
    if stat.S_ISREG(mode):
        return "file", Path(os.path.realpath(path))
    what = (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a block device"
        if stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    raise OutputError(f"{dest}: is {what}; refusing to write to it")


def _system(path: str) -> bool:
    return path.startswith(SYSTEM_DIRS)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def _to_stdout(content: str | bytes | Writer) -> None:
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        raise OutputError("stdout is closed; use -o FILE")
    try:
        buffer = getattr(sys.stdout, "buffer", None)
        if isinstance(content, str) and buffer is None:  # a text-only stream standing in for stdout
            sys.stdout.write(content)
            sys.stdout.flush()
            return
        if isinstance(content, str) and buffer is not None:
            sys.stdout.flush()
            write_all(buffer, content.encode(sys.stdout.encoding or "utf-8", "backslashreplace"))
            return
        if sys.stdout.isatty():
            raise OutputError("refusing to write binary output to a terminal; use -o FILE")
        write_all(sys.stdout.buffer, _bytes(content))  # whole: no partial report read as a whole one
    except BrokenPipeError:
        raise
    except OSError as err:
        raise OutputError(f"stdout: cannot write ({_why(err)})") from None


def _in_place(content: str | bytes | Writer, dest: str) -> None:
    """Write into a device, FIFO or terminal as it is: opened for writing, never created,
    truncated or renamed over (a FIFO waits for its reader, as ``cat > fifo`` does)."""
    try:
        fd = os.open(dest, os.O_WRONLY | os.O_NOCTTY)
        if stat.S_ISREG(os.fstat(fd).st_mode):  # /dev/stdout redirected to a file: add to it
            os.close(fd)
            fd = os.open(dest, os.O_WRONLY | os.O_NOCTTY | os.O_APPEND)
    except OSError as err:
        raise OutputError(f"{dest}: cannot write ({_why(err)})") from None
    with os.fdopen(fd, "wb") as fh:
        try:
            if not isinstance(content, str) and os.isatty(fd):
                raise OutputError(f"{dest}: refusing to write binary output to a terminal")
            if callable(content):
                content(fh)
                fh.flush()
            else:
                write_all(fh, _bytes(content))
        except OSError as err:
            discard_into(fd)  # closing would flush the unwritten rest and fail the same way
            raise OutputError(f"{dest}: cannot write ({_why(err)})") from None


def discard_into(fd: int) -> None:
    """Point ``fd`` at the null device, so that what is still buffered for it goes nowhere quietly
    (opening the node to write leaves it as it is)."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


def _mode_for(target: Path) -> int:
    """Keep an existing file's permissions; new files get the usual 0666 minus the umask."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _atomic(content: str | bytes | Writer, target: Path, dest: str) -> None:
    """A temporary file beside ``target``, renamed over it once whole."""
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputError(f"{dest}: cannot write (permission denied)")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise OutputError(f"{dest}: cannot write ({_why(err)})") from None
    try:
        os.chmod(tmp, _mode_for(target))
        with os.fdopen(fd, "wb") as fh:
            if callable(content):
                content(fh)  # straight into the file: no copy of the content in memory
            else:
                fh.write(_bytes(content))
        os.replace(tmp, target)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"{dest}: cannot write ({_why(err)})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
