"""Incremental analysis of one followed file: parse new lines, run cheap detectors on a window,
rerun the batch analysis on a schedule, and let the judge (tail/judge.py) turn it into events.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from logdoctor import codes
from logdoctor.detectors.base import Analyzer
from logdoctor.detectors.integrity import stuck_findings
from logdoctor.errors import LogdoctorError
from logdoctor.ingest.chunks import ChunkParser
from logdoctor.ingest.parsers import Parser
from logdoctor.ingest.sources import Source
from logdoctor.model import ACC, LOSS, STEP, Finding, Run, StuckCounter, Verdict
from logdoctor.structure.build import build_run
from logdoctor.tail.events import Deduper, FindingRaised, Notice, Progress, SourceSummary, TailEvent
from logdoctor.tail.history import History, overview
from logdoctor.tail.judge import Coverage, Judge
from logdoctor.tail.settings import Latest, Schedule, SessionOptions, epochs_covered

__all__ = ["HeavyFn", "HeavyResult", "Latest", "Schedule", "SessionOptions", "TailSession"]

#: What a heavy analysis returns: its findings and the batching verdict (None: no verdict).
HeavyResult = tuple[Sequence[Finding], Verdict | None]
HeavyFn = Callable[[Run], HeavyResult]
#: Codes never raised in tail mode: "too short" is the normal state of a run that is still growing.
QUIET_CODES = frozenset({"LD006"})
#: Codes a cheap detector raises at once: a non-finite loss is a fact of the rows read, which the
#: batch analysis of those rows reports too; everything else waits for the heavy pass's judgement.
IMMEDIATE_CODES = frozenset({"LD001"})


#: Lines without a step row after which a notice says so (once).
NO_STEPS_NOTICE = 1000


class TailSession:
    """One followed file. ``feed`` takes complete lines; ``heavy_due``/``heavy_input``/
    ``apply_heavy`` let the caller run the heavy analyses inline or in a worker thread.
    """

    def __init__(
        self,
        source: str,
        cheap: Sequence[Analyzer],
        heavy: HeavyFn | None,
        opts: SessionOptions | None = None,
    ) -> None:
        self.source = source
        self.cheap = tuple(cheap)
        self.heavy = heavy
        self.opts = opts or SessionOptions()
        self.history = History(full_rows=self.opts.full_rows)
        self.ingest = ChunkParser(source, self.opts.fields)
        self.last = Latest()
        self.judge = Judge(source)
        self._dedupe = Deduper()
        self._urgent = 0
        self._looks = 0
        self._cover = Coverage(0)
        self._document: Run | None = None
        self._restarts = 0
        self._cheap_at = -math.inf
        self._unchecked = 0
        self._input_cost = 0.0
        #: the complete lines read so far, for the heavy pass to parse whole (set by the caller)
        self.prefix: Callable[[], bytes] | None = None
        self._quiet = 0
        self._heavy_rows = 0
        self._heavy_at = -math.inf
        self._heavy_cost = 0.0
        self._stuck_told: tuple[StuckCounter, ...] = ()

    @property
    def parser(self) -> Parser | None:
        """The parser sniffed from the head of the file (None until content arrives)."""
        return self.ingest.parser

    @property
    def lines(self) -> int:
        """Lines read so far."""
        return self.ingest.lines

    @property
    def skipped(self) -> dict[str, int]:
        """Lines that held no training step, by reason."""
        return self.ingest.skipped

    # ---------------------------------------------------------------- ingest + cheap analysis
    def feed(self, data: bytes, now: float | None = None, head: bytes | None = None) -> list[TailEvent]:
        """Parse new complete lines, run the cheap detectors, return the events they raise."""
        now = time.time() if now is None else now
        events: list[TailEvent] = []
        if not data:
            return events
        known = self.ingest.parser is not None
        parser = self.ingest.sniff(data, head)
        if parser is not None and not known:
            events.append(Notice(self.source, f"format: {parser.name}", now))
        table, evals = self.ingest.parse(data)
        if table.height == 0:
            if not self.history.rows_total and self.ingest.lines >= NO_STEPS_NOTICE > self._quiet:
                self._quiet = self.ingest.lines
                events.append(
                    Notice(
                        self.source,
                        f"no training step in the first {self._quiet} "
                        f"lines (format {self.parser.name if self.parser else '?'})",
                        now,
                    )
                )
            return events
        return events + self._take(self._given_stride(table), evals, now)

    def _take(self, table: pl.DataFrame, evals: pl.DataFrame | None, now: float) -> list[TailEvent]:
        """New step rows, however they were read (lines parsed, a document read again): held,
        checked by the cheap detectors (at once when a loss is not finite), then progress. Every
        live source comes through here, so each reaches the judge with the same latency."""
        self.history.append(table, evals)
        self._remember_latest(table)
        self._unchecked += table.height
        bad = not table[LOSS].is_finite().all() if table.height else False
        events: list[TailEvent] = []
        if bad or now - self._cheap_at >= self.opts.schedule.cheap_gap:
            events += self._cheap(self._unchecked, now)
            self._cheap_at, self._unchecked = now, 0
        events += self._stuck(now)
        events.append(self._progress(now))
        return events

    def feed_run(self, run: Run, now: float) -> list[TailEvent]:
        """A whole document read again (tail/documents.py): its rows beyond those held take the
        path of parsed lines (cheap detectors, progress); the heavy pass judges the document as
        read, the batch Run."""
        events: list[TailEvent] = []
        if self._document is None:
            events.append(Notice(self.source, f"format: {run.meta.format}", now))
        self._document = run
        have = self.history.rows_total
        if run.table.height < have:  # saved again from an earlier checkpoint
            events.append(self.restarted("rewritten shorter", now))
            self.history, have = History(full_rows=self.opts.full_rows), 0
        new = run.table.slice(have)
        if new.height:
            events += self._take(new, None, now)
        return events

    @property
    def format(self) -> str | None:
        """The format read (None until content arrives)."""
        if self._document is not None:
            return self._document.meta.format
        return self.parser.name if self.parser else None

    def _given_stride(self, table: pl.DataFrame) -> pl.DataFrame:
        """Rows of a log that prints no step are numbered per chunk: with ``--stride N`` row k of the
        file is step k x N."""
        result = self.ingest.result
        if not self.opts.stride or result is None or not result.step_from_order:
            return table
        first = self.history.rows_total + 1
        steps = pl.int_range(first, first + pl.len(), dtype=pl.Int64) * self.opts.stride
        return table.with_columns(steps.alias(STEP))

    def restarted(self, how: str, now: float) -> Notice:
        """The file started over (truncated or replaced): keep the history, say so."""
        self._restarts += 1
        return Notice(self.source, f"file {how}: reading it from the start", now)

    def _remember_latest(self, table: pl.DataFrame) -> None:
        row = table.tail(1).row(0, named=True)
        loss, acc = row[LOSS], row.get(ACC)
        self.last = Latest(
            int(row[STEP]),
            float(loss) if loss is not None else math.nan,
            None if acc is None else float(acc),
        )

    def _cheap(self, new_rows: int, now: float) -> list[TailEvent]:
        if not self.cheap:
            return []
        run = self._run(self.history.tail(new_rows + self.opts.context))
        found: list[Finding] = []
        with np.errstate(all="ignore"):  # as pipeline.analyze: values near ±1e308 overflow quietly
            for detector in self.cheap:
                found.extend(detector.analyze(run).findings)
        return self._raise_cheap(found, now)

    def _stuck(self, now: float) -> list[TailEvent]:
        """LD008 once a step counter is seen stuck (the history keeps one row for its records, so
        the window detectors never see it: the history's tracker does, with analyze's rule)."""
        counters = self.history.stuck.counters()
        if not counters or counters == self._stuck_told:
            return []
        events: list[TailEvent] = []
        for f in self._kept(stuck_findings(counters, self._format)):
            events += self.judge.raise_now(f, self._step(), now, 0)
        if events:
            self._stuck_told = counters
        return events

    def stuck_final(self, now: float) -> list[TailEvent]:
        """At stop: LD008 once more with the final counts when a stuck run grew after it was raised
        (the same numbers analyze gives for the whole file)."""
        counters = self.history.stuck.counters()
        if not self._stuck_told or counters == self._stuck_told:
            return []
        self._stuck_told = counters
        found = self._kept(stuck_findings(counters, self._format))
        return [FindingRaised(self.source, f, self._step(), now) for f in found]

    @property
    def _format(self) -> str:
        return self.parser.name if self.parser else ""

    def _run(self, rows: pl.DataFrame, *, evals: bool = False) -> Run:
        if self._document is not None:  # a window of the document as the batch reader built it
            return dataclasses.replace(self._document, table=rows, earlier=())
        evals_rows = self.history.evals() if evals else pl.DataFrame()
        result = self.ingest.facts.result(rows, evals_rows, self.lines, self.skipped)
        fmt = self.parser.name if self.parser else "unknown"
        # tail watches the current run: earlier runs appended to the log are not rebuilt each pass
        return build_run(result, self.source, fmt, self.opts.steps_per_epoch, earlier_runs=False, live=True)

    def _progress(self, now: float) -> Progress:
        recent = self.history.tail(self.opts.sparkline)[LOSS].to_list()
        return Progress(
            source=self.source,
            step=self.last.step if self.last.step is not None else 0,
            loss=self.last.loss if self.last.loss is not None else math.nan,
            acc=self.last.acc,
            rows=self.history.rows_total,
            recent_loss=tuple(float(v) if v is not None else math.nan for v in recent),
            time=now,
        )

    # ---------------------------------------------------------------- heavy analysis
    def heavy_due(self, now: float) -> bool:
        """True when the heavy analyses should rerun now (see Schedule); sooner when a cheap
        detector saw something new that only the heavy pass may raise."""
        rows, sched = self.history.rows_total, self.opts.schedule
        if self.heavy is None or rows == 0 or rows == self._heavy_rows:
            return False
        if self._urgent and now - self._heavy_at >= sched.urgent_gap:
            return True
        grown = rows - self._heavy_rows >= max(1.0, sched.growth * self._heavy_rows)
        timed = now - self._heavy_at >= sched.interval
        spaced = now - self._heavy_at >= max(sched.min_gap, self._heavy_cost / sched.duty)
        return (grown or timed) and spaced

    @property
    def heavy_started(self) -> float:
        """When (monotonic seconds) the heavy analyses last started; -inf before the first run."""
        return self._heavy_at

    @property
    def heavy_cost(self) -> float:
        """CPU seconds the last heavy analysis took."""
        return self._heavy_cost

    def heavy_input(self, now: float) -> Run:
        """Snapshot the full-resolution history as a Run and mark the heavy analyses started."""
        self._heavy_rows, self._heavy_at = self.history.rows_total, now
        self._urgent = max(0, self._urgent - 1)
        self._looks += 1
        t0 = time.thread_time()
        run = self._document or self._whole_prefix() or self._run(self.history.frame(), evals=True)
        self._input_cost = time.thread_time() - t0  # counted with the pass (Schedule.duty)
        self._cover = Coverage(run.table.height, epochs_covered(run))
        return run

    def _whole_prefix(self) -> Run | None:
        """The lines read so far parsed whole by the batch reader, as ``analyze`` of them would:
        a chunk-by-chunk parse can differ where a parser weighs the whole file (which keys are
        columns, what a banner before a step means). Only while every row read is held at full
        resolution and the file never started over (else the history is the run)."""
        if self.prefix is None or self.parser is None or self._restarts or self.history.rows_summarized:
            return None
        data = self.prefix()
        if not data:
            return None
        try:
            result = self.parser.parse(Source.from_bytes(self.source, data), self.opts.fields)
            return build_run(
                result,
                self.source,
                self.parser.name,
                self.opts.steps_per_epoch,
                stride=self.opts.stride,
                earlier_runs=False,
                live=True,
            )
        except LogdoctorError:
            return None

    def heavy_call(self, run: Run, *, final: bool = False) -> HeavyResult:
        """The heavy pass over ``run``: the look number goes to an analysis that spends its
        significance level over the passes (None for the final pass: the batch analysis)."""
        if self.heavy is None:
            return (), None
        if getattr(self.heavy, "spends_alpha", False):
            return self.heavy(run, look=None if final else self._looks)  # type: ignore[call-arg]
        return self.heavy(run)

    def apply_heavy(self, result: HeavyResult, cost: float, now: float, *, final: bool = False) -> list[TailEvent]:
        """Turn a heavy analysis result (and the seconds it took) into events (``final``: the
        last pass, whose judgement stands without waiting for another pass to agree)."""
        self._heavy_cost = cost + self._input_cost
        findings, verdict = result
        near = max(1, self.history.n_full // 100)
        return self.judge.judge(self._kept(findings), verdict, self._cover, self._step(), now, near=near, final=final)

    def run_heavy(self, now: float | None = None, *, final: bool = False) -> list[TailEvent]:
        """Run the heavy analyses inline (tests, the final summary)."""
        now = time.time() if now is None else now
        if self.heavy is None or self.history.rows_total == 0:
            return []
        run = self.heavy_input(time.monotonic())
        t0 = time.process_time()
        result = self.heavy_call(run, final=final)
        return self.apply_heavy(result, time.process_time() - t0, now, final=final)

    # ---------------------------------------------------------------- events
    def _kept(self, found: Sequence[Finding]) -> list[Finding]:
        return codes.select([f for f in found if f.code not in QUIET_CODES], self.opts.select, self.opts.ignore)

    def _raise_cheap(self, found: Sequence[Finding], now: float) -> list[TailEvent]:
        """Facts (a NaN loss) are raised at once; anything else a cheap detector sees first asks
        for a heavy pass, whose judgement (attribution included) decides."""
        events: list[TailEvent] = []
        near = max(1, self.history.n_full // 100)
        for f in sorted(self._kept(found), key=_order):
            if f.code in IMMEDIATE_CODES:
                events += self.judge.raise_now(f, self._step(), now, near)
            elif not self.judge.holds(f, near) and self._dedupe.is_new(f, 1):
                self._urgent = self.judge.confirm
        return events

    def _step(self) -> int | None:
        return self.last.step

    @property
    def verdict(self) -> Verdict | None:
        """The verdict announced so far."""
        return self.judge.verdict

    def summary(self) -> SourceSummary:
        """Where this file stands now: the findings that stand (raised, not withdrawn)."""
        first, lowest = overview(self.history.summary, self.history.tail(self.opts.full_rows))
        return SourceSummary(
            source=self.source,
            format=self.format,
            rows=self.history.rows_total,
            last_step=self.last.step,
            last_loss=self.last.loss,
            findings=len(self.judge.standing),
            worst=self.judge.worst,
            verdict=self.judge.verdict,
            first_loss=first,
            min_loss=lowest,
            withdrawn=self.judge.withdrawn,
        )


def _order(f: Finding) -> tuple[float, str]:
    return (f.first_step if f.first_step is not None else math.inf, f.code)
