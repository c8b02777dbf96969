"""Run the user's code (their target, sampler, dataset) so that what it raises is shown as theirs."""

from __future__ import annotations

import contextlib
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from logdoctor.errors import LogdoctorError

T = TypeVar("T")
#: logdoctor's own source folder: a frame in it is never the user's
_OURS = str(Path(__file__).resolve().parents[1])


class UserCodeError(LogdoctorError):
    """The user's code raised: the message names the exception and where in their code (file and
    line); ``frames`` keeps their part of the traceback for ``-v``."""

    slug = "user_code"

    def __init__(self, message: str, frames: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.frames = frames


def _theirs(filename: str) -> bool:
    return not str(Path(filename).resolve()).startswith(_OURS)


def _site(filename: str) -> bool:
    """A library's file (site-packages, the standard library), not the user's own."""
    return (
        "site-packages" in filename
        or "dist-packages" in filename
        or filename.startswith(sys.prefix)
        or filename.startswith(sys.base_prefix)
        or filename.startswith("<frozen")
    )


def _origin(err: BaseException) -> tuple[traceback.FrameSummary | None, tuple[str, ...]]:
    """The frame to name (the deepest in the user's own files, else the deepest outside logdoctor)
    and the traceback's frames outside logdoctor, formatted."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if _theirs(f.filename)]
    own = [f for f in frames if not _site(f.filename)]
    pick = own[-1] if own else frames[-1] if frames else None
    return pick, tuple(traceback.format_list(frames))


def described(err: BaseException, what: str) -> UserCodeError:
    """The error ``err`` raised by the user's code while doing ``what``, as one line."""
    frame, frames = _origin(err)
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    where = f" at {frame.filename}:{frame.lineno} in {frame.name}" if frame is not None else ""
    if isinstance(err, SystemExit):
        return UserCodeError(
            f"{what}: the code exited (SystemExit {err.code!r}){where}; does it parse "
            "arguments or call sys.exit when imported?",
            frames,
        )
    return UserCodeError(f"{what}: {type(err).__name__}{': ' + text if text else ''}{where}", frames)


def ours(err: BaseException) -> bool:
    """The exception was raised inside logdoctor itself, not in code it called: a bug of ours."""
    tb = traceback.extract_tb(err.__traceback__)
    return bool(tb) and not _theirs(tb[-1].filename)


def call(what: str, fn: Callable[[], T]) -> T:
    """``fn()``; an exception it raises from the user's code becomes a ``UserCodeError``."""
    try:
        return fn()
    except LogdoctorError:
        raise
    except (Exception, SystemExit) as err:
        if ours(err):
            raise
        raise described(err, what) from err


@contextlib.contextmanager
def guarded(what: str) -> Iterator[None]:
    """``call`` for a block (the walk: every ``next`` on the user's sampler runs their code)."""
    try:
        yield
    except LogdoctorError:
        raise
    except (Exception, SystemExit) as err:
        if ours(err):
            raise
        raise described(err, what) from err
