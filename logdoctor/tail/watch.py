"""Wait for file-system changes: inotify through ctypes on Linux, polling elsewhere."""

from __future__ import annotations

import ctypes
import ctypes.util
import fnmatch
import os
import select
import struct
import sys
import time
from collections.abc import Mapping
from typing import Protocol

# inotify constants from <sys/inotify.h>
_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_IGNORED = 0x8000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_DIR_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
)
_SELF_GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len


class Watcher(Protocol):
    """Something that blocks until a watched file may have changed."""

    def watch(self, dirs: Mapping[str, tuple[str, ...]]) -> None:
        """Watch these directories for changes to files matching the name patterns."""

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds; True when a watched file may have changed."""

    def close(self) -> None:
        """Release the watcher's resources."""


class PollWatcher:
    """The portable fallback: every wait sleeps and then says "look again".

    A byte written to ``wake_fd`` (a pipe the signal handlers write to) ends the sleep early.
    """

    def __init__(self, wake_fd: int | None = None) -> None:
        self.wake_fd = wake_fd

    def watch(self, dirs: Mapping[str, tuple[str, ...]]) -> None:
        """Polling needs no registration."""

    def wait(self, timeout: float) -> bool:
        """Sleep ``timeout`` seconds (less when woken) and report a possible change."""
        if self.wake_fd is None:
            time.sleep(max(0.0, timeout))
        elif select.select([self.wake_fd], [], [], max(0.0, timeout))[0]:
            _drain_wake(self.wake_fd)
        return True

    def close(self) -> None:
        """Nothing to release."""


class InotifyWatcher:
    """Linux inotify on the parent directories of the followed files (catches appends,
    creation, rotation and deletion); events for other files in those directories are ignored.
    """

    def __init__(self, wake_fd: int | None = None) -> None:
        self.wake_fd = wake_fd
        libc = _libc()
        if libc is None:
            raise OSError("inotify is not available")
        self._libc: ctypes.CDLL = libc
        fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._fd: int = fd
        self._wds: dict[int, tuple[str, tuple[str, ...]]] = {}
        self._by_dir: dict[str, int] = {}

    def watch(self, dirs: Mapping[str, tuple[str, ...]]) -> None:
        """Add watches for new directories and refresh the name patterns of known ones.

        Directories that do not exist (yet) are skipped; the caller asks again later.
        """
        for d, patterns in dirs.items():
            wd = self._by_dir.get(d)
            if wd is None:
                wd = self._libc.inotify_add_watch(self._fd, os.fsencode(d), _DIR_MASK)
                if wd < 0:
                    continue
                self._by_dir[d] = wd
            self._wds[wd] = (d, patterns)

    def wait(self, timeout: float) -> bool:
        """Block until a relevant event arrives or ``timeout`` passes."""
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            left = max(0.0, deadline - time.monotonic())
            fds = [self._fd] if self.wake_fd is None else [self._fd, self.wake_fd]
            ready, _, _ = select.select(fds, [], [], left)
            if not ready:
                return False
            if self.wake_fd in ready:
                _drain_wake(self.wake_fd)
                return True
            if self._drain():
                return True

    @property
    def watched(self) -> tuple[str, ...]:
        """The directories currently watched."""
        return tuple(self._by_dir)

    def _drain(self) -> bool:
        relevant = False
        while True:
            try:
                buf = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                return relevant
            for wd, mask, name in _events(buf):
                relevant |= self._relevant(wd, mask, name)

    def _relevant(self, wd: int, mask: int, name: str) -> bool:
        entry = self._wds.get(wd)
        if entry is None:
            return False
        d, patterns = entry
        if mask & _SELF_GONE and not name:
            del self._wds[wd]
            self._by_dir.pop(d, None)
            return True
        return any(fnmatch.fnmatchcase(name, p) for p in patterns)

    def close(self) -> None:
        """Close the inotify descriptor."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _events(buf: bytes) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    pos = 0
    while pos + _HEADER.size <= len(buf):
        wd, mask, _cookie, length = _HEADER.unpack_from(buf, pos)
        raw = buf[pos + _HEADER.size : pos + _HEADER.size + length]
        out.append((wd, mask, os.fsdecode(raw.split(b"\x00", 1)[0])))
        pos += _HEADER.size + length
    return out


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return libc


def _drain_wake(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def make_watcher(use_inotify: bool = True, wake_fd: int | None = None) -> Watcher:
    """inotify when asked for and available, polling otherwise; ``wake_fd`` (non-blocking read
    end of a pipe) interrupts a wait when it becomes readable.
    """
    if use_inotify:
        try:
            return InotifyWatcher(wake_fd)
        except OSError:
            pass
    return PollWatcher(wake_fd)
