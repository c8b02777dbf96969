"""Ctrl-C and SIGTERM as a flag plus a wake-up byte, so a signal never lands inside a parse."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from types import FrameType


class StopSignals:
    """While installed, SIGINT/SIGTERM set ``reason`` and write to a pipe whose read end
    (``wake_fd``, non-blocking) the watcher selects on; a second Ctrl-C raises KeyboardInterrupt.
    Installing is a no-op outside the main thread (Python delivers signals there only).
    """

    def __init__(self) -> None:
        self.reason: str | None = None
        self.wake_fd, self._write_fd = os.pipe()
        os.set_blocking(self.wake_fd, False)
        os.set_blocking(self._write_fd, False)
        self._previous: dict[int, object] = {}

    def install(self) -> None:
        """Take over SIGINT and SIGTERM (main thread only)."""
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGINT, signal.SIGTERM):
                self._previous[s] = signal.signal(s, self._handler)

    def restore(self) -> None:
        """Give the signals back to their previous handlers."""
        for s, h in self._previous.items():
            signal.signal(s, h)  # type: ignore[arg-type]
        self._previous.clear()

    def close(self) -> None:
        """Close the pipe."""
        for fd in (self.wake_fd, self._write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self.reason and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.reason = "terminated" if signum == signal.SIGTERM else "interrupted"
        with contextlib.suppress(OSError):
            os.write(self._write_fd, b"x")
