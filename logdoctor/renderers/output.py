"""One helper owns output files: "-" is stdout, writes are atomic, inputs are never overwritten."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from logdoctor.errors import OutputError


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def _mode_for(target: Path) -> int:
    """Keep an existing file's permissions; new files get the usual 0666 minus the umask."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


#: Binary content written by a function into the stream it is given (a table's writer), so that
#: no copy of it is held in memory first.
Writer = Callable[[BinaryIO], None]


def _bytes(content: str | bytes | Writer) -> bytes:
    if callable(content):
        buf = io.BytesIO()
        content(buf)
        return buf.getvalue()
    return content if isinstance(content, bytes) else content.encode("utf-8")


def write_output(content: str | bytes | Writer, dest: str, *, inputs: Iterable[str] = ()) -> None:
    """Write ``content`` (text, bytes, or a Writer of binary content) to ``dest`` ("-" for stdout).

    Files are written to a temporary file in the target directory and renamed into place, so a
    failure never leaves a partial file. The parent directory is created when missing.

    Raises:
        OutputError: ``dest`` is one of the inputs, binary output to a terminal, or unwritable.
    """
    if dest == "-":
        if not isinstance(content, str):
            if sys.stdout.isatty():
                raise OutputError("refusing to write binary output to a terminal; use -o FILE")
            # whole, as one write: a reader that goes away is a BrokenPipeError here (the CLI's)
            sys.stdout.buffer.write(_bytes(content))
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(content)
            sys.stdout.flush()
        return
    target = Path(dest)
    for name in inputs:
        if name not in ("-", "<stdin>") and _same_file(Path(name), target):
            raise OutputError(f"{dest}: refusing to overwrite an input file")
    if target.is_dir():
        raise OutputError(f"{dest}: is a directory")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise OutputError(f"{dest}: cannot write ({err.strerror or err})") from None
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
        raise OutputError(f"{dest}: cannot write ({err.strerror or err})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
