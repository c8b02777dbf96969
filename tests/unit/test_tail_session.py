"""TailSession: incremental parsing, cheap detectors raised once, heavy schedule, verdict events."""

from __future__ import annotations

import math

import polars as pl
import pytest

from logdoctor import codes
from logdoctor.errors import InputError, ParseError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.chunks import ChunkParser
from logdoctor.ingest.parsers import Parser, ParseResult
from logdoctor.ingest.sources import Source
from logdoctor.model import Finding, Run, Verdict
from logdoctor.tail.events import Deduper, FindingRaised, Notice, Progress, VerdictChanged
from logdoctor.tail.history import History
from logdoctor.tail.session import HeavyResult, Schedule, SessionOptions, TailSession
from tests.tail_support import NanDetector, SpikeDetector, losses, regular_spikes_heavy, step_line


def _lines(vals: list[float], start: int = 1) -> bytes:
    return "".join(step_line(start + i, v) for i, v in enumerate(vals)).encode()


def _found(events: list[object]) -> list[tuple[str, int | None]]:
    return [(e.finding.code, e.finding.first_step) for e in events if isinstance(e, FindingRaised)]


def test_rows_and_line_numbers_accumulate_across_chunks() -> None:
    s = TailSession("a.log", [], None)
    ev = s.feed(b"banner line\nconfig: lr=1\n" + _lines([3.0, 2.9]))
    assert isinstance(ev[0], Notice) and ev[0].message == "format: text"
    assert isinstance(ev[-1], Progress) and ev[-1].step == 2 and ev[-1].rows == 2
    s.feed(b"a warning\n" + _lines([2.8], start=3))
    t = s.history.frame()
    assert t["step"].to_list() == [1, 2, 3]
    assert t["line_no"].to_list() == [3, 4, 6]  # real line numbers in the file
    assert s.lines == 6 and sum(s.skipped.values()) == 3  # the reason's name is the parser's
    assert s.last.step == 3 and s.last.loss == 2.8 and s.last.acc is not None


def test_blank_start_and_chunks_without_steps_are_skipped() -> None:
    s = TailSession("a.log", [NanDetector()], None)
    assert s.feed(b"\n\n") == [] and s.parser is None
    assert [type(e) for e in s.feed(b"loading data...\n")] == [Notice]
    assert s.history.rows_total == 0 and s.skipped["no training step"] == 1
    s.feed(_lines([1.0]))
    assert s.history.frame()["line_no"].to_list() == [4]


def test_nan_streak_is_raised_once_across_updates_and_a_new_streak_again() -> None:
    s = TailSession("a.log", [NanDetector()], None, SessionOptions(context=3))
    vals = losses(40, nan_at=(10, 11, 12, 13, 14, 15, 30))
    raised = []
    for i in range(0, 40, 4):  # chunks of 4 lines; the streak 10-15 spans two chunks
        raised += _found(s.feed(_lines(vals[i : i + 4], start=i + 1), now=float(i)))
    assert raised == [("LD001", 10), ("LD001", 30)]
    ev = [e for e in s.feed(_lines([math.nan], start=41)) if isinstance(e, FindingRaised)]
    assert ev[0].finding.first_step == 41 and ev[0].step == 41 and ev[0].finding.line == 41


def test_healthy_run_raises_nothing() -> None:
    s = TailSession("a.log", [NanDetector(), SpikeDetector()], regular_spikes_heavy())
    for i in range(0, 300, 50):
        assert _found(s.feed(_lines(losses(300)[i : i + 50], start=i + 1))) == []
    ev = s.run_heavy(final=True)  # the final pass does not wait for a second one to agree
    assert _found(ev) == [] and [type(e) for e in ev] == [VerdictChanged]
    assert s.run_heavy() == []  # the same verdict is not raised again


def test_periodic_spikes_build_up_to_a_pattern_then_stay_quiet() -> None:
    s = TailSession("a.log", [SpikeDetector()], regular_spikes_heavy())
    vals = losses(260, spike_every=50)
    order: list[tuple[str, object]] = []
    passes = [s.feed(_lines(vals[i : i + 20], start=i + 1)) + s.run_heavy() for i in range(0, 260, 20)]
    for e in [e for events in passes for e in events] + s.run_heavy(final=True):
        if isinstance(e, FindingRaised):
            order.append((e.finding.code, e.finding.first_step))
        elif isinstance(e, VerdictChanged):
            order.append(("verdict", e.verdict.batching))
    # each is raised once a second pass agrees (the spike at 50 by the pass at 80); the spike at
    # 250 by the final pass alone
    assert order == [
        ("verdict", "inconclusive"),
        ("LD101", 50),
        ("LD101", 100),
        ("verdict", "sorted"),
        ("LD101", 150),
        ("LD103", None),
        ("LD101", 200),
        ("LD101", 250),
    ]


def test_ld006_and_ignored_codes_are_never_raised() -> None:
    def heavy(run: Run) -> HeavyResult:
        return [codes.finding("LD006", "too short"), codes.finding("LD103", "x")], None

    s = TailSession("a.log", [], heavy, SessionOptions(ignore=("LD103",)))
    s.feed(_lines([1.0, 1.0]))
    assert s.run_heavy() == []


def test_heavy_schedule_growth_interval_and_duty() -> None:
    sched = Schedule(growth=0.5, interval=100.0, min_gap=1.0, duty=0.1)
    s = TailSession("a.log", [], lambda run: ([], None), SessionOptions(schedule=sched))
    assert not s.heavy_due(0.0)  # nothing yet
    s.feed(_lines([1.0] * 10))
    assert s.heavy_due(0.0)
    s.heavy_input(0.0)
    s.apply_heavy(([], None), cost=0.5, now=0.0)  # 0.5 s of CPU -> at least 5 s apart at 10% duty
    s.feed(_lines([1.0] * 4, start=11))
    assert not s.heavy_due(10.0)  # grew by 40% < 50%
    s.feed(_lines([1.0] * 2, start=15))
    # (plus the CPU of building the pass's input, a few ms here)
    assert not s.heavy_due(4.0) and s.heavy_due(6.0)
    s.heavy_input(5.0)
    s.apply_heavy(([], None), cost=0.0, now=5.0)
    s.feed(_lines([1.0], start=17))
    assert not s.heavy_due(50.0) and s.heavy_due(105.0)  # little growth: the interval decides


def test_verdict_change_is_an_event_confidence_alone_is_not() -> None:
    s = TailSession("a.log", [], None)
    s.feed(_lines([1.0]))
    v1 = Verdict("inconclusive", 0.1, "undetermined", "x")
    assert s.apply_heavy(([], v1), 0.0, 0.0) == []  # one pass alone announces nothing
    ev = s.apply_heavy(([], v1), 0.0, 0.0)
    assert isinstance(ev[0], VerdictChanged) and ev[0].previous is None
    assert s.apply_heavy(([], Verdict("inconclusive", 0.3, "undetermined", "y")), 0.0, 0.0) == []
    static = Verdict("static", 0.9, "fixed batches", "z")
    assert s.apply_heavy(([], static), 0.0, 0.0) == []
    ev = s.apply_heavy(([], static), 0.0, 0.0)
    assert isinstance(ev[0], VerdictChanged) and ev[0].previous == "inconclusive"
    assert s.summary().verdict is not None and s.summary().verdict.batching == "static"


def _f(code: str, first: int | None, last: int | None = None) -> Finding:
    return codes.finding(code, "m", first_step=first, last_step=last if last is not None else first)


def test_deduper_rules() -> None:
    d = Deduper(keep=4)
    assert d.is_new(_f("LD001", 10, 15))
    assert not d.is_new(_f("LD001", 10, 20))  # same start, grown streak
    assert not d.is_new(_f("LD001", 18, 25))  # window clipped the streak's start
    assert d.is_new(_f("LD001", 40))
    assert d.is_new(_f("LD101", 40))  # other code
    assert d.is_new(_f("LD301", 40))
    assert not d.is_new(_f("LD301", 43), near=5)  # a changepoint estimate that moved
    assert d.is_new(_f("LD301", 60), near=5)
    assert d.is_new(_f("LD201", None)) and not d.is_new(_f("LD201", None))


def test_history_is_bounded_and_summarises_what_it_drops() -> None:
    h = History(full_rows=1000, max_blocks=8)
    total, dropped_sum = 0, 0.0
    for c in range(40):
        steps = list(range(c * 500, (c + 1) * 500))
        loss = [float(s % 7) for s in steps]
        h.append(pl.DataFrame({"step": steps, "loss": loss, "line_no": [s + 1 for s in steps]}))
        total += 500
    assert h.rows_total == total == 20_000
    assert h.n_full <= 1250 and h.summary.height <= 8
    kept = h.frame()
    assert kept["step"][-1] == 19_999 and kept.height == h.n_full
    dropped_sum = sum(float(s % 7) for s in range(20_000 - h.n_full))
    assert h.summary["rows"].sum() == h.rows_summarized
    assert math.isclose(h.summary["loss_sum"].sum(), dropped_sum)
    assert h.summary["step_first"][0] == 0 and h.summary["step_last"][-1] == 20_000 - h.n_full - 1
    assert h.tail(3)["step"].to_list() == [19_997, 19_998, 19_999]


def test_a_log_without_steps_says_so_once() -> None:
    s = TailSession("a.log", [], None)
    notes = [e for e in s.feed(b"loading...\n" * 600) if isinstance(e, Notice)]
    assert [n.message for n in notes] == ["format: text"]
    notes = [e for e in s.feed(b"still loading\n" * 600) if isinstance(e, Notice)]
    assert [n.message for n in notes] == ["no training step in the first 1200 lines (format text)"]
    assert not [e for e in s.feed(b"more\n" * 2000) if isinstance(e, Notice)]


class _HeaderCsv(Parser):
    """A test-only parser that, like CSV, cannot read rows without the header line."""

    name = "test-csv"
    description = "header + rows"

    def sniff(self, source: Source) -> bool:
        return source.head_text().startswith("step,")

    def parse(self, source: Source, fields: FieldMap) -> ParseResult:
        lines = source.text().splitlines()
        if not lines or lines[0] != "step,loss":
            raise ParseError("no header")
        rows = [(i + 1, *line.split(",")) for i, line in enumerate(lines) if line[:1].isdigit()]
        if not rows:
            raise ParseError("no rows")
        table = pl.DataFrame(
            {
                "line_no": [r[0] for r in rows],
                "step": [int(r[1]) for r in rows],
                "loss": [float(r[2]) for r in rows],
            }
        )
        return ParseResult(
            table=table,
            lines_read=len(lines),
            skip_reasons={"no training step": len(lines) - len(rows)},
        )


def test_header_lines_are_put_in_front_of_every_chunk() -> None:
    ingest = ChunkParser("a.csv", FieldMap())
    ingest.parser = _HeaderCsv()
    first, _ = ingest.parse(b"step,loss\n1,3.0\n")
    second, _ = ingest.parse(b"2,2.9\n3,2.8\n")
    third, _ = ingest.parse(b"4,2.7\n")
    assert first["step"].to_list() == [1] and second["step"].to_list() == [2, 3]
    assert third["line_no"].to_list() == [5] and second["line_no"].to_list() == [3, 4]
    assert ingest.lines == 5 and ingest.skipped == {"no training step": 1}


def test_whole_document_formats_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    class Doc(_HeaderCsv):
        name = "hf_trainer_state"

    monkeypatch.setattr("logdoctor.ingest.chunks.sniff", lambda source: Doc())
    with pytest.raises(InputError, match="rewritten whole"):
        ChunkParser("trainer_state.json", FieldMap()).sniff(b'{"log_history": []}\n')


def _document(vals: list[float]) -> Run:
    """A trainer_state.json as saved after ``len(vals)`` logged steps, read by the batch reader."""
    from logdoctor import pipeline

    rows = [{"step": i + 1, "loss": v, "learning_rate": 1e-3} for i, v in enumerate(vals)]
    return pipeline.load_records({"global_step": len(vals), "log_history": rows}, "trainer_state.json")


def test_a_document_read_again_reaches_the_cheap_detectors_as_lines_do() -> None:
    """A NaN in the rows a save adds is raised at that save (no heavy pass, no second save), once;
    the same rows as lines raise the same finding; a healthy save raises nothing."""
    vals = losses(60, nan_at=(45, 46))
    doc = TailSession("trainer_state.json", [NanDetector()], None)
    assert _found(doc.feed_run(_document(vals[:40]), now=1.0)) == []
    assert _found(doc.feed_run(_document(vals[:50]), now=2.0)) == [("LD001", 45)]
    assert _found(doc.feed_run(_document(vals), now=3.0)) == []  # the same streak: it stands
    lines = TailSession("a.log", [NanDetector()], None)
    assert _found(lines.feed(_lines(vals[:40])) + lines.feed(_lines(vals[40:50], start=41))) == [("LD001", 45)]
