"""``--on-finding CMD``: run a command per finding, with its JSON on stdin, off the follow loop."""

from __future__ import annotations

import contextlib
import os
import queue
import shlex
import shutil
import signal
import subprocess
import threading
import time
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


def _group_lives(pgid: int) -> bool:
    """Whether process group ``pgid`` still has a member (signal 0 checks without sending)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class FindingHook:
    """Runs the command in one worker thread, one finding after another, each with a timeout.

    Each run is the leader of its own process group (a shell script's children included), so a
    run that overruns is killed with everything it started, and a Ctrl-C meant for tail does not
    reach it. The follow loop only enqueues; when ``max_queue`` findings are waiting, newer ones
    are dropped and counted, never blocking the follower, and the loss is said (``errors``).
    ``close`` waits (bounded) for the runs queued, then kills the one still running and every
    process a finished run left behind in its group (``sleep 600 &``), and says how many
    findings were never passed on.
    """

    def __init__(self, command: str, *, timeout: float = 10.0, max_queue: int = 100) -> None:
        self.argv = parse_command(command)
        self.timeout = timeout
        self.max_queue = max_queue
        self.dropped = 0
        self.ran = 0
        self._said_dropped = 0
        #: process groups started whose members may still live (pruned as they empty)
        self._groups: list[int] = []
        self._errors: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._queue: queue.Queue[tuple[str, Mapping[str, str]] | None] = queue.Queue(max_queue)
        self._running: subprocess.Popen[bytes] | None = None
        self._stopping = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._work, name="logdoctor-on-finding", daemon=True)
        self._thread.start()

    def submit(self, payload: str, env: Mapping[str, str]) -> None:
        """Queue one run of the command with ``payload`` on stdin and ``env`` added."""
        try:
            self._queue.put_nowait((payload, env))
        except queue.Full:
            self.dropped += 1

    def errors(self) -> list[str]:
        """Problems met since the last call (one line each), findings dropped since included."""
        out: list[str] = []
        while not self._errors.empty():
            out.append(self._errors.get())
        if self.dropped > self._said_dropped:
            n, self._said_dropped = self.dropped - self._said_dropped, self.dropped
            out.append(
                f"--on-finding {self.argv[0]}: {n} finding(s) not passed on: "
                f"{self.max_queue} were already waiting for the command"
            )
        return out

    def close(self, wait: float) -> None:
        """Let queued runs finish for up to ``wait`` seconds in all, then kill the run still
        going (with its process group) and stop the worker; queued runs not started are dropped."""
        deadline = time.monotonic() + max(0.0, wait)
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=max(0.0, wait))
        self._thread.join(max(0.0, deadline - time.monotonic()))
        if self._thread.is_alive():
            self._stopping = True
            unsent = self._drain()
            with self._lock:
                running = self._running
            self._kill(running)
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait(None)
            self._thread.join(1.0)
            if running is not None:
                self._errors.put(f"--on-finding {self.argv[0]}: still running when tail stopped, killed")
            if unsent:
                self.dropped += unsent
                self._said_dropped += unsent
                self._errors.put(
                    f"--on-finding {self.argv[0]}: {unsent} queued finding(s) not passed on: tail stopped first"
                )
        for group in self._groups:  # what finished runs left running in their groups
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        self._groups.clear()

    def _drain(self) -> int:
        """Empty the queue; the number of runs it held."""
        n = 0
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return n
            n += item is not None

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None or self._stopping:
                return
            payload, env = item
            self._run(payload, env)

    def _run(self, payload: str, env: Mapping[str, str]) -> None:
        name = self.argv[0]
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=2,  # keep our stdout (e.g. --format jsonl) clean
                env={**os.environ, **env},
                start_new_session=True,  # its own process group: killed whole, spared our Ctrl-C
            )
        except OSError as err:
            self._errors.put(f"--on-finding {name}: cannot run ({err.strerror or err})")
            return
        with self._lock:
            self._running = proc
            self._groups[:] = [g for g in self._groups if _group_lives(g)]
            self._groups.append(proc.pid)
        try:
            if self._stopping:  # close() came between the queue and the start: killed, nothing sent
                self._kill(proc)
                return
            proc.communicate(payload.encode("utf-8"), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self._kill(proc)
            self._errors.put(f"--on-finding {name}: killed after {self.timeout:g} s")
            return
        except ValueError:
            # close() killed and reaped it (its own communicate) while this one was starting: Popen
            # refuses a second exchange; the run is over, and close() says so
            return
        finally:
            with self._lock:
                self._running = None
        if self._stopping:
            return  # killed by close(), which says so
        self.ran += 1
        if proc.returncode:
            self._errors.put(f"--on-finding {name}: exited with status {proc.returncode}")

    def _kill(self, proc: subprocess.Popen[bytes] | None) -> None:
        """Kill ``proc``'s process group (the hook and every child it started) and reap it."""
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired, OSError, ValueError):
            proc.communicate(timeout=1.0)
