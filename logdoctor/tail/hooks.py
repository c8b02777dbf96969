"""``--on-finding CMD``: run a command per finding, with its JSON on stdin, off the follow loop."""

from __future__ import annotations

import os
import queue
import shlex
import shutil
import subprocess
import threading
from collections.abc import Mapping

from logdoctor.errors import ConfigError


def parse_command(command: str) -> list[str]:
    """Split ``command`` like a shell would (no shell runs it) and check the program exists.

    Raises:
        ConfigError: unbalanced quotes, an empty command, or a program that cannot be found.
    """
    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise ConfigError(f"--on-finding {command!r}: {err}") from None
    if not argv:
        raise ConfigError("--on-finding needs a command")
    if shutil.which(argv[0]) is None:
        raise ConfigError(f"--on-finding: program {argv[0]!r} not found or not executable")
    return argv


class FindingHook:
    """Runs the command in one worker thread, one finding after another, each with a timeout
    (the child is killed when it overruns). The follow loop only enqueues; when ``max_queue``
    findings are waiting, newer ones are dropped and counted, never blocking the follower.
    """

    def __init__(self, command: str, *, timeout: float = 10.0, max_queue: int = 100) -> None:
        self.argv = parse_command(command)
        self.timeout = timeout
        self.dropped = 0
        self.ran = 0
        self._errors: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._queue: queue.Queue[tuple[str, Mapping[str, str]] | None] = queue.Queue(max_queue)
        self._thread = threading.Thread(target=self._work, name="logdoctor-on-finding", daemon=True)
        self._thread.start()

    def submit(self, payload: str, env: Mapping[str, str]) -> None:
        """Queue one run of the command with ``payload`` on stdin and ``env`` added."""
        try:
            self._queue.put_nowait((payload, env))
        except queue.Full:
            self.dropped += 1

    def errors(self) -> list[str]:
        """Problems met since the last call (one line each)."""
        out: list[str] = []
        while not self._errors.empty():
            out.append(self._errors.get())
        return out

    def close(self, wait: float) -> None:
        """Let queued runs finish for up to ``wait`` seconds, then stop the worker."""
        try:
            self._queue.put(None, timeout=max(0.0, wait))
        except queue.Full:
            return
        self._thread.join(max(0.0, wait))

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            payload, env = item
            self._run(payload, env)

    def _run(self, payload: str, env: Mapping[str, str]) -> None:
        name = self.argv[0]
        try:
            proc = subprocess.run(
                self.argv,
                input=payload.encode("utf-8"),
                stdout=2,  # keep our stdout (e.g. --format jsonl) clean
                env={**os.environ, **env},
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            self._errors.put(f"--on-finding {name}: killed after {self.timeout:g} s")
            return
        except OSError as err:
            self._errors.put(f"--on-finding {name}: cannot run ({err.strerror or err})")
            return
        self.ran += 1
        if proc.returncode:
            self._errors.put(f"--on-finding {name}: exited with status {proc.returncode}")
