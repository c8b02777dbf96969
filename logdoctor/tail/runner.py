"""The follow loop: discover files, read new lines, analyse, emit events, decide when to stop."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from logdoctor import sanitize
from logdoctor.detectors.base import Analyzer
from logdoctor.errors import InputError, LogdoctorError
from logdoctor.exitcodes import ExitCode
from logdoctor.ingest.mlflow_server import run_ref
from logdoctor.model import Run, Severity
from logdoctor.tail.documents import DocumentFollower, document_format
from logdoctor.tail.events import (
    FindingRaised,
    FindingRevised,
    FindingWithdrawn,
    Heartbeat,
    Notice,
    Started,
    Stopped,
    TailEvent,
)
from logdoctor.tail.follower import FileFollower, expand, is_glob, watch_dirs
from logdoctor.tail.hooks import FindingHook
from logdoctor.tail.pending import Pending
from logdoctor.tail.runsources import MlflowPoller, WandbFollower, run_follower
from logdoctor.tail.session import HeavyFn, HeavyResult, SessionOptions, TailSession
from logdoctor.tail.signals import StopSignals
from logdoctor.tail.stream import StreamRenderer, event_dict, event_json
from logdoctor.tail.watch import InotifyWatcher, make_watcher

#: CPU seconds of a heavy pass above which the final pass is skipped (Ctrl-C should not hang).
FINAL_COST = 2.0


@dataclass(frozen=True, slots=True)
class TailOptions:
    """How to follow. Times are in seconds; None disables a limit."""

    patterns: tuple[str, ...]
    from_end: bool = False
    poll_interval: float = 0.5
    min_update: float = 0.5
    heartbeat: float = 5.0
    idle_timeout: float | None = None
    max_seconds: float | None = None
    exit_on: Severity | None = None
    on_finding: str | None = None
    hook_timeout: float = 10.0
    #: seconds the --on-finding runs still going or queued get once tail stops (a time limit is
    #: kept to about a second); then the running one is killed and what was never passed on is said
    hook_grace: float = 1.0
    inotify: bool = True
    server_interval: float = 10.0
    background: bool = True
    #: seconds a file's new lines gather before they are parsed (tail/pending.py; 0: every read):
    #: the cheap pass's gap (Schedule.cheap_gap), so its window (new rows + context) stays as long
    #: as when every read was parsed, and a second NaN beyond the context is raised on its own
    parse_gap: float = 1.0
    session: SessionOptions = field(default_factory=SessionOptions)


class Tailer:
    """Follows the files named by ``opts.patterns`` and feeds ``renderer`` until told to stop."""

    def __init__(
        self,
        opts: TailOptions,
        renderer: StreamRenderer,
        cheap: Sequence[Analyzer],
        heavy: HeavyFn | None,
    ) -> None:
        self.opts, self.renderer, self.cheap, self.heavy = opts, renderer, tuple(cheap), heavy
        self.hook = FindingHook(opts.on_finding, timeout=opts.hook_timeout) if opts.on_finding else None
        self.signals = StopSignals()
        self.watcher = make_watcher(opts.inotify, self.signals.wake_fd)
        self.files: dict[str, tuple[FileFollower | WandbFollower | MlflowPoller | DocumentFollower, TailSession]] = {}
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="logdoctor-heavy") if opts.background else None
        self._pending: tuple[TailSession, Future[tuple[HeavyResult, float]]] | None = None
        self._unparsed: dict[str, Pending] = {}
        self._exit = False

    def run(self) -> int:
        """Follow until a stop condition; returns the exit code. Whatever ends it (a closed
        stdout, an error), the hooks' processes do not outlive it."""
        try:
            return self._run()
        except BaseException:
            if self.hook is not None:
                self.hook.close(0.0)
            raise

    def _run(self) -> int:
        kind = "inotify" if isinstance(self.watcher, InotifyWatcher) else "poll"
        self.signals.install()
        reason, code = "interrupted", ExitCode.OK
        try:
            self.renderer.start(Started(self.opts.patterns, time.time(), self.opts.from_end, kind))
            reason, code = self._loop()
        except KeyboardInterrupt:  # a second Ctrl-C, or one outside the loop
            reason = "interrupted"
        except LogdoctorError:  # close the view and say why, then let the CLI report it
            self._close()
            self._stop("error", ExitCode.BAD_INPUT)
            raise
        finally:
            self.signals.restore()
        try:
            if reason != "exit-on":
                self._final_analysis()
            else:  # the summary counts every line read
                self._emit(self._drain())
        except KeyboardInterrupt:  # a second Ctrl-C skips the final analysis
            reason = "interrupted"
        if self._exit and reason in ("idle-timeout", "max-seconds"):
            code = ExitCode.FINDINGS  # the final pass (analyze of all rows) raised an --exit-on one
        self._close()
        self._stop(reason, code)
        return int(code)

    def _stop(self, reason: str, code: ExitCode) -> None:
        summaries = tuple(s.summary() for _, s in self.files.values())
        self.renderer.stop(Stopped(reason, int(code), summaries, time.time()))

    def _loop(self) -> tuple[str, ExitCode]:
        o = self.opts
        start = last_data = time.monotonic()
        next_beat = start + o.heartbeat
        self._discover(initial=True)
        while True:
            now = time.monotonic()
            events, more, kept = self._read_all()
            got_data = more or kept or any(not isinstance(e, Notice) for e in events)
            if got_data:
                last_data = now
            events += self._heavy(now)
            if now >= next_beat:
                events += self._heartbeats()
                next_beat = now + o.heartbeat
            self._emit(events)
            if self.signals.reason:
                return self.signals.reason, ExitCode.OK
            if self._exit:
                return "exit-on", ExitCode.FINDINGS
            if o.max_seconds is not None and now - start >= o.max_seconds:
                return "max-seconds", ExitCode.OK
            if o.idle_timeout is not None and now - last_data >= o.idle_timeout:
                return "idle-timeout", ExitCode.OK
            limits = [
                next_beat - now,
                2.0 if isinstance(self.watcher, InotifyWatcher) else o.poll_interval,
            ]
            limits += [start + o.max_seconds - now] if o.max_seconds is not None else []
            limits += [last_data + o.idle_timeout - now] if o.idle_timeout is not None else []
            limits += [0.05] if self._pending else []
            limits += [p.wait(now) for p in self._unparsed.values() if len(p)]
            limits += [0.0] if more else []  # a long line or a NUL run: read on, not idle
            if self.watcher.wait(max(0.0, min(limits))):
                self._discover()
            if got_data and not more:  # coalesce a busy writer's appends into one update per min_update
                time.sleep(max(0.0, now + o.min_update - time.monotonic()))

    def _discover(self, initial: bool = False) -> None:
        for path in expand(list(self.opts.patterns)):
            if path in self.files:
                continue
            tracked = run_follower(path, self.opts.server_interval, self.opts.session.fields)
            if tracked is None and os.path.isdir(path):
                raise InputError(f"{path}: is a directory; tail follows log files (try --glob)")
            follower = tracked or FileFollower(path, from_end=self.opts.from_end and initial)
            session = TailSession(path, self.cheap, self.heavy, self.opts.session)
            if isinstance(follower, FileFollower):
                session.prefix = follower.prefix
            self.files[path] = (follower, session)
            if tracked is not None:
                self._emit([Notice(path, tracked.describe, time.time())])
            elif initial and not is_glob(path) and not os.path.exists(path):
                self._emit([Notice(path, "waiting for the file to appear", time.time())])
        self.watcher.watch(watch_dirs(self._watch_patterns()))

    def _watch_patterns(self) -> list[str]:
        """The patterns whose directories to watch: a W&B run folder's ``*.wandb`` inside it (its
        appends wake the loop), every file of a run folder read as a document (a TensorBoard
        run's event files, in its subfolders too); nothing for a tracking server's run (it is
        polled)."""
        out: list[str] = []
        for p in self.opts.patterns:
            if run_ref(p) is not None:
                continue
            follower = self._follower(p)
            if isinstance(follower, WandbFollower) and os.path.isdir(p):
                out.append(os.path.join(p, "*.wandb"))
            elif isinstance(follower, DocumentFollower) and os.path.isdir(p):
                out += [p] + [os.path.join(d, "*") for d, _, _ in os.walk(p)]
            else:
                out.append(p)
        return out

    def _follower(self, path: str) -> object:
        entry = self.files.get(path)
        return entry[0] if entry else None

    def _upgrade(self) -> list[TailEvent]:
        """A literal path that was not there at the start and is now a directory: a W&B run
        folder (``wandb/latest-run`` appears once wandb starts) is followed as one; any other
        directory is refused."""
        events: list[TailEvent] = []
        for path, (follower, session) in list(self.files.items()):
            if not isinstance(follower, FileFollower) or session.parser is not None:
                continue
            document = os.path.isfile(path) and document_format(path) is not None
            if not document and (follower.is_open or not os.path.isdir(path)):
                continue
            tracked = run_follower(path, self.opts.server_interval, self.opts.session.fields)
            if tracked is None:
                entries = list(Path(path).iterdir())
                if not entries or any(p.suffix == ".wandb" or p.name == "files" for p in entries):
                    continue  # being created: a W&B run folder whose .wandb file is not there yet
                raise InputError(f"{path}: is a directory; tail follows log files (try --glob)")
            self.files[path] = (tracked, session)
            events.append(Notice(path, tracked.describe, time.time()))
        if events:
            self.watcher.watch(watch_dirs(self._watch_patterns()))
        return events

    def _read_all(self) -> tuple[list[TailEvent], bool, bool]:
        """Events of what every follower read, whether one stopped at its read limit, and whether
        lines were kept to parse later (tail/pending.py)."""
        events: list[TailEvent] = self._upgrade()
        more = kept = False
        for follower, session in self.files.values():
            was_open = follower.is_open
            chunk = follower.read()
            more = more or chunk.more
            now = time.time()
            if isinstance(follower, FileFollower):
                events += [Notice(session.source, note, now) for note in follower.skipped()]
            if chunk.restarted:
                events += self._parse(session, now)  # the lines read before the file started over
                events.append(session.restarted(chunk.restarted, now))
            if chunk.notice:
                events.append(Notice(session.source, chunk.notice, now))
            if chunk.run is not None:
                events += session.feed_run(chunk.run, now)
                continue
            if session.parser is None or self.opts.parse_gap <= 0:  # the first content: its format
                head = follower.head() if self.opts.from_end and not was_open else None
                events += session.feed(chunk.data, now, head=head)
                continue
            pending = self._unparsed.setdefault(session.source, Pending(gap=self.opts.parse_gap))
            pending.add(chunk.data, time.monotonic())
            kept = kept or bool(chunk.data)
            if pending.due(time.monotonic()):
                events += self._parse(session, now)
        return events, more, kept

    def _drain(self) -> list[TailEvent]:
        """Parse the lines kept for every file."""
        return [e for _, s in self.files.values() for e in self._parse(s, time.time())]

    def _parse(self, session: TailSession, now: float) -> list[TailEvent]:
        """Hand the lines kept for ``session`` to it (none kept: no events)."""
        pending = self._unparsed.get(session.source)
        return session.feed(pending.take(), now) if pending is not None and len(pending) else []

    def _heavy(self, now: float) -> list[TailEvent]:
        if self._pending is not None:
            session, fut = self._pending
            if not fut.done():
                return []
            self._pending = None
            result, cost = fut.result()
            return session.apply_heavy(result, cost, time.time())
        due = [s for _, s in self.files.values() if s.heavy_due(now)]
        if not due:
            return []
        session = min(due, key=lambda s: s.heavy_started)
        events = self._parse(session, time.time())  # the pass reads every line read: parse them too
        run = session.heavy_input(now)
        if self._pool is None:
            result, cost = _timed(session, run)
            return events + session.apply_heavy(result, cost, time.time())
        self._pending = (session, self._pool.submit(_timed, session, run))
        return events

    def _heartbeats(self) -> list[TailEvent]:
        now = time.time()
        if not self.files:
            return [Heartbeat(", ".join(self.opts.patterns), None, None, 0, now)]
        beats: list[TailEvent] = []
        for _, s in self.files.values():
            summary = s.summary()
            beats.append(Heartbeat(s.source, summary.last_step, summary.last_loss, summary.rows, now))
        return beats

    def _emit(self, events: Sequence[TailEvent]) -> None:
        if self.hook is not None:
            events = [*events, *(Notice("on-finding", e, time.time()) for e in self.hook.errors())]
        for event in events:
            self.renderer.handle(event)
            if not isinstance(event, FindingRaised | FindingWithdrawn | FindingRevised):
                continue
            if self.hook is not None:
                env = {
                    "LOGDOCTOR_EVENT": event_dict(event)["event"],
                    "LOGDOCTOR_CODE": event.finding.code,
                    "LOGDOCTOR_SEVERITY": event.finding.severity.label,
                    "LOGDOCTOR_SOURCE": sanitize.redact(event.source),
                }
                self.hook.submit(event_json(event), env)
            raised = not isinstance(event, FindingWithdrawn)
            if raised and self.opts.exit_on is not None and event.finding.severity >= self.opts.exit_on:
                self._exit = True

    def _final_analysis(self) -> None:
        """Collect a running heavy pass, then judge each file by the batch analysis of all its
        rows (what stands at the end is what ``analyze`` gives), unless its passes cost more
        than ``FINAL_COST`` seconds (then the last pass's judgement stands)."""
        events = self._drain()
        if self._pending is not None:
            session, fut = self._pending
            self._pending = None
            result, cost = fut.result()
            events += session.apply_heavy(result, cost, time.time())
        for follower, s in self.files.values():
            if s.heavy_cost < FINAL_COST:
                events += s.run_heavy(final=True)
            events += s.stuck_final(time.time())
            if isinstance(follower, FileFollower):
                events += [Notice(s.source, note, time.time()) for note in follower.skipped(final=True)]
        self._emit(events)

    def _close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        if self.hook is not None:
            self.hook.close(min(self.opts.hook_timeout, self.opts.hook_grace))
            self._emit([])
        for follower, _ in self.files.values():
            follower.close()
        self.watcher.close()
        self.signals.close()


def _timed(session: TailSession, run: Run) -> tuple[HeavyResult, float]:
    t0 = time.thread_time()
    result = session.heavy_call(run)
    return result, time.thread_time() - t0


def follow(
    opts: TailOptions,
    renderer: StreamRenderer,
    *,
    cheap: Sequence[Analyzer] | None = None,
    heavy: HeavyFn | None = None,
) -> int:
    """Follow the files of ``opts`` with the given detectors (the registry's by default).

    Returns:
        the exit code: 0 when stopped by Ctrl-C, SIGTERM or a time limit, 1 on ``--exit-on``.
    """
    from logdoctor.tail.registry import default_detectors

    if cheap is None or heavy is None:
        default_cheap, default_heavy = default_detectors(opts.session)
        cheap = default_cheap if cheap is None else cheap
        heavy = default_heavy if heavy is None else heavy
    return Tailer(opts, renderer, cheap, heavy).run()
