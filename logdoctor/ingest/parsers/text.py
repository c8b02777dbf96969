"""Free-form text logs: custom key=value lines, nanoGPT, llm.c, Megatron, fairseq, Marian..."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from logdoctor.errors import InputError, ParseError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.parsers import pieces
from logdoctor.ingest.parsers.allskipped import all_skipped_rows
from logdoctor.ingest.parsers.base import RESTART, Parser, ParseResult
from logdoctor.ingest.parsers.evalsections import eval_only_curve, has_banner, mark_eval_sections
from logdoctor.ingest.parsers.events import failures, scan_events
from logdoctor.ingest.parsers.lexicon import FATAL, STOP
from logdoctor.ingest.parsers.lines import clean, read_lines
from logdoctor.ingest.parsers.losspick import main_part, main_part_note, refusal_hint, total_note
from logdoctor.ingest.parsers.markers import Markers, scan_markers
from logdoctor.ingest.parsers.overflows import (
    attach_overflows,
    attach_skip_counters,
    scan_overflows,
    scan_skip_counters,
)
from logdoctor.ingest.parsers.ranks import keep_rank, rank_note, rank_tags
from logdoctor.ingest.parsers.recordorder import BY_EPOCH, epoch_records, number_by_order
from logdoctor.ingest.parsers.records import drop_summaries
from logdoctor.ingest.parsers.samestep import merge_shapes, tag_shapes
from logdoctor.ingest.parsers.screen import Lines
from logdoctor.ingest.parsers.statedclasses import stated_classes, stated_vocab
from logdoctor.ingest.parsers.stepless import stepless_launches
from logdoctor.ingest.parsers.textblocks import BATCH_LINE, MSG, rewrite
from logdoctor.ingest.parsers.textshape import Extracted, drop_bar_starts, extract
from logdoctor.ingest.sources import Source
from logdoctor.model import BATCHES, BATCHES_TOTAL, EPOCH, LINE_NO, LOSS, STEP, LogEvent

if TYPE_CHECKING:
    from logdoctor.ingest.parsers.textfast import FastRead

_SNIFF_BYTES = 8192
#: An unstepped line shape 20x rarer than the most common one is a summary, not a step.
SUMMARY_SHARE = 20
#: Loss records without step numbers are numbered 1, 2, ... only when there are at least this
#: many and no line of the log has a step (a stray ``loss: 0.1`` in a config is not a run).
MIN_UNSTEPPED = 3
#: Lines that say training (re)started: Marian's ``Training started``, ``Resuming training from``,
#: HF Trainer's ``Continuing training from global step 400`` / ``Will skip the first 1 epochs``
#: (4.x) and ``Fast-forwarding the dataloader past 1 epochs`` (5.x).
RESTART_MARK = (
    r"(?i)\btraining started\b|\bresum(?:ing|ed) (?:training|from)\b|\brestarting training\b"
    r"|\bcontinuing training from (?:checkpoint|epoch|global step)\b|\bwill skip the first \d+ epochs?\b"
    r"|\bfast-forwarding the dataloader past\b"
)
_CONTROL = bytes(range(0, 32)).replace(b"\t", b"").replace(b"\n", b"").replace(b"\r", b"")
_CONTROL = _CONTROL.replace(b"\x1b", b"").replace(b"\x08", b"")  # colours; a progress bar's backspaces


def _enough_unstepped(out: Extracted) -> bool:
    """Records without a step are numbered as a run when there are ``MIN_UNSTEPPED`` of them, or
    fewer that count epochs one by one (recordorder.epoch_records)."""
    n = sum(t.height for t in out.unstepped)
    return n >= MIN_UNSTEPPED or (n >= 2 and epoch_records(_combine(out.unstepped)))


def fast_rows(data: bytes, fields: FieldMap, out: Extracted) -> FastRead | None:
    """``textfast.fast_rows``: None for a log shorter than ``pieces.FAST_MIN_LINES`` without loading the
    fast path's modules (~2 ms of a small log's start)."""
    if pieces.fewer_lines(data, pieces.FAST_MIN_LINES):
        return None
    from logdoctor.ingest.parsers import textfast

    return textfast.fast_rows(data, fields, out)


def is_binary(head: bytes) -> bool:
    """True when a byte prefix is not text: a NUL byte, or more than 10% control bytes."""
    if b"\x00" in head:
        return True
    if not head:
        return False
    control = sum(head.count(bytes([c])) for c in _CONTROL)
    return control > len(head) // 10


def _combine(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """The rows of several line shapes in line order. Segments of one physical line (a progress bar
    redrawn with ``\\r`` or backspaces) share its number; their order is that of the epoch and the
    batch counter where the rows hold them (a bar's count does not go back within one drawing of an
    epoch: Keras 3 pads some drawings, so one epoch's ``1/16``, ``8/16 `` and ``13/16`` are rows of
    different shapes; Lightning draws an epoch's last count again with ``val_loss`` added to its
    postfix on the line that then draws the whole next epoch)."""
    if not frames:
        return pl.DataFrame()
    if len(frames) == 1 and frames[0][LINE_NO].is_sorted():
        return frames[0]
    rows = pl.concat(frames, how="diagonal_relaxed")
    keys = [LINE_NO, *(c for c in (EPOCH, BATCHES) if c in rows.columns and BATCHES in rows.columns)]
    return rows.sort(keys, maintain_order=True)


def _flag_restarts(table: pl.DataFrame, rest: pl.DataFrame) -> pl.DataFrame:
    """Add ``restart`` = 1 on the first step after each restart marker line (Marian's
    ``Training started``): structure.build_run counts a resume there even when the step counter
    does not go back. Only added when a marker follows some step."""
    if table.height == 0:
        return table
    if not Lines.of(rest[MSG]).may_match(RESTART_MARK):
        return table
    marks = rest.filter(pl.col(MSG).str.contains(RESTART_MARK))[LINE_NO].to_numpy()
    at = np.searchsorted(table[LINE_NO].to_numpy(), marks, side="right")  # repeats set one flag
    at = at[(at > 0) & (at < table.height)]
    if at.size == 0:
        return table
    flags = np.zeros(table.height)
    flags[at] = 1.0
    return table.with_columns(pl.Series(RESTART, flags))


def _evals(out: Extracted) -> pl.DataFrame:
    """The evaluation records, ``step`` as a nullable Int64."""
    evals = _combine(out.evals)
    if STEP in evals.columns:
        evals = evals.with_columns(pl.col(STEP).cast(pl.Int64, strict=False))
    return evals


def _total(out: Extracted) -> int | None:
    """The planned total steps: the largest ``N/T`` total seen on step lines."""
    values = [s.drop_nulls().drop_nans() for s in out.totals]
    best = max((float(s.max()) for s in values if s.len()), default=None)  # type: ignore[arg-type]
    return int(best) if best is not None else None


def _by_shape(out: Extracted) -> list[pl.DataFrame]:
    """The unstepped rows, one frame per line shape (the fast path and the general path may each
    have read some lines of one shape)."""
    frames: dict[str, list[pl.DataFrame]] = {}
    for shape, t in zip(out.unstepped_shapes, out.unstepped, strict=True):
        frames.setdefault(shape, []).append(t)
    return [f[0] if len(f) == 1 else pl.concat(f, how="diagonal_relaxed") for f in frames.values()]


def _main_shapes(out: Extracted, markers: Markers) -> list[pl.DataFrame]:
    """Unstepped rows without the rare shapes beside a dominant one: at most one line per epoch
    marker and 20x rarer (``Epoch 3 - Average Train Loss`` lines among ``Epoch 3 - Batch loss``
    lines are per-epoch summaries, not steps)."""
    shapes = _by_shape(out)
    biggest = max(t.height for t in shapes)
    keep = [
        t
        for t in shapes
        if t.height * SUMMARY_SHARE >= biggest
        or t.height > len(markers.epoch_lines)
        or BATCHES in t.columns  # a batch counter's last line (Keras ``285/285 ... val_loss``)
    ]
    dropped = sum(t.height for t in out.unstepped) - sum(t.height for t in keep)
    if dropped:
        out.skips["summary line"] += dropped
        out.skips["no step"] -= dropped
    return keep


def _lossless(out: Extracted) -> pl.DataFrame:
    """Step records that carry no loss (see textshape), in line order, with every value they hold
    (Megatron's ``loss scale`` and ``number of skipped iterations`` on an all-skipped iteration)."""
    if not out.lossless:
        return pl.DataFrame()
    return pl.concat(out.lossless, how="diagonal_relaxed").sort(LINE_NO)


def _lossless_steps(rows: pl.DataFrame) -> tuple[int, ...]:
    """Steps of the records without a loss, sorted and unique."""
    if rows.height == 0:
        return ()
    return tuple(int(s) for s in rows[STEP].drop_nulls().unique().sort())


def _epoch_position(table: pl.DataFrame, notes: list[str]) -> int | None:
    """Steps per epoch from a position-in-epoch counter beside a global step (Coqui ``STEP: 24/36
    -- GLOBAL_STEP: 1000025``): the counter's stated total, when every line states the same one."""
    if BATCHES_TOTAL not in table.columns or table.height == 0:
        return None
    totals = table[BATCHES_TOTAL].drop_nulls().drop_nans().unique()
    if totals.len() != 1 or not float(totals[0]) >= 1:
        return None
    n = int(totals[0])
    notes.append(f"`STEP: i/{n}` is the position in the epoch: {n} steps per epoch (the step is the global step)")
    return n


def _with(lines: pl.DataFrame, others: pl.DataFrame | None) -> pl.DataFrame:
    """The lines read for failures: ``lines`` and the other ranks' lines (``others``), in line order."""
    if others is None or others.height == 0:
        return lines
    return pl.concat([lines.select(LINE_NO, "line"), others]).sort(LINE_NO)


def _events(lines: pl.DataFrame, table: pl.DataFrame, markers: Markers) -> tuple[LogEvent, ...]:
    """The failure events of a text log and the launches before its first row that logged no step
    (stepless.py), file order."""
    rows = table[LINE_NO].to_numpy() if LINE_NO in table.columns else None
    found = scan_events(lines, rows, markers.run_headers)
    failed = tuple(e.line for e in found if e.role in (FATAL, STOP))
    plans = tuple(line for _, line, _ in markers.plans)
    return tuple(sorted(found + stepless_launches(lines, rows, plans, failed), key=lambda e: e.line))


class TextParser(Parser):
    """Lines that carry a step number and metric values, in whatever spelling a tool prints."""

    name = "text"
    description = (
        "free-form text lines (key=value, key: value, key value; nanoGPT, llm.c, Megatron, "
        "fairseq, Marian, Joey NMT, OpenNMT, OLMo, Sockeye, Keras console, tqdm bars, "
        "HF Trainer console, Coqui TTS blocks, DeepSpeed-Chat, ...)"
    )

    def sniff(self, source: Source) -> bool:
        if source.is_dir:
            return False
        return not is_binary(source.head_bytes(_SNIFF_BYTES))

    def parse(self, source: Source, fields: FieldMap, first_epoch: int | None = None) -> ParseResult:
        """Read the source; ``first_epoch``: the epoch that the steps derived from a progress bar's
        epoch and count counted from in the lines before these (``ParseResult.first_epoch`` of
        the chunks before, when a growing log is read in chunks)."""
        data = source.read_bytes()
        if is_binary(data[:_SNIFF_BYTES]):
            raise InputError(f"{source.name}: binary file, not a text training log")
        read = self._read(data, source, fields, first_epoch=first_epoch)
        tags = rank_tags(data)
        if tags is None or LINE_NO not in read.table.columns:
            return read
        with_rows = tags.ranks_of(read.table[LINE_NO].to_numpy())
        if len(with_rows) < 2:
            return read  # one rank prints the metrics: its rows are the run's already
        # several ranks' metric lines: one series per rank, read once, of the lowest; every
        # rank's failure lines still read (a crash of any rank is the run's)
        kept, others = keep_rank(data, tags, with_rows[0])
        read = self._read(kept, source, fields, others, first_epoch=first_epoch)
        return dataclasses.replace(read, notes=(rank_note(tags, with_rows), *read.notes))

    def _read(
        self,
        data: bytes,
        source: Source,
        fields: FieldMap,
        others: pl.DataFrame | None = None,
        first_epoch: int | None = None,
    ) -> ParseResult:
        """``parse`` of ``data`` (``source``'s bytes, or one rank's lines of them); ``others``: the
        other ranks' lines, read only for failure events."""
        out = Extracted(first_epoch=first_epoch)
        fast = fast_rows(data, fields, out)
        if fast is not None and has_banner(clean(fast.rest)):
            # an evaluation banner among the other lines: the result line after it may be of the
            # template the fast path read as training steps, so every line is read the general way
            out, fast = Extracted(first_epoch=first_epoch), None
        rest = read_lines(data) if fast is None else fast.rest
        lines = fast.lines if fast is not None else int(rest[LINE_NO].max() or 0)  # type: ignore[arg-type]
        records = lines if fast is not None else rest.height  # \r-split segments count apart
        # marker lines are never the dominant step template the fast path read
        markers = scan_markers(rest)
        classes = stated_classes(rest) + stated_vocab(rest)
        overflows = scan_overflows(rest)
        events_in = rest
        rest, banners = mark_eval_sections(clean(rest))
        in_batches = Lines.of(rest[MSG]).contains(rest[MSG], BATCH_LINE)
        rest, folded = rewrite(rest)
        if folded:
            out.skips["metric block line"] += folded
        extract(rest, fields, out)
        # a run summary (``train_runtime``...) repeats the last step: dropped before steps merge
        train = drop_bar_starts(_combine(tag_shapes(out.train)), out.skips)
        table, merged = merge_shapes(drop_summaries(train, out.skips))
        table = _flag_restarts(table, rest)
        table = attach_overflows(table, overflows)
        if overflows.height == 0 and not any("skipped" in c for c in table.columns):
            # read only where nothing else counts the skipped steps: overflow lines (one per skip) or
            # a skip counter on the metric lines (Megatron's ``number of skipped iterations``)
            table = attach_skip_counters(table, scan_skip_counters(events_in))
        notes: list[str] = list(out.notes)
        if banners:
            notes.append(
                f"{banners} metric line(s) printed under an evaluation banner (e.g. `***** Evaluating "
                "perplexity *****`) are read as evaluation results, not training steps"
            )
        if merged:
            notes.append(
                f"{merged} step(s) printed by two line shapes (e.g. DeepSpeed's `steps: N loss:` and "
                "Megatron's `iteration N/ T |`) are read as one record each: the line with more values wins"
            )
        from_order = False
        if table.height == 0 and _enough_unstepped(out):
            from_order = True
            rows = _combine(_main_shapes(out, markers))
            # HF's end-of-training dict (``train_runtime``, ``train_loss``: the run's mean) is no step
            kept = drop_summaries(rows, out.skips)
            table, numbered = number_by_order(kept)
            # an epoch printed on every record is the log's own counter: placed as printed, never
            # renumbered by record order (a resume from an earlier epoch's checkpoint overwrites)
            from_order = numbered != BY_EPOCH
            out.skips["no step"] -= table.height + rows.height - kept.height
            notes.append(numbered)
            if overflows.height == 0 and not any("skipped" in c for c in table.columns):
                # DeepSpeed's ``step=K, skipped=S`` beside a loop that prints no step (read above when
                # the rows had steps): placed by line, a record number being no optimizer step
                table = attach_skip_counters(table, scan_skip_counters(events_in), by_line=True)
        evals = _evals(out)
        if table.height == 0 and (curve := eval_only_curve(evals)) is not None:
            table, evals = curve[0], evals.clear()
            out.skips["eval line"] -= table.height
            notes.append(curve[1])
        if table.height == 0 and (skipped := all_skipped_rows(_lossless(out))) is not None:
            table = skipped[0]
            out.lossless.clear()  # they are the rows now
            notes.append(skipped[1])
        if table.height == 0:
            seen = ", ".join(sorted(out.keys_seen)[:12]) or "none"
            reasons = ", ".join(f"{k}: {v}" for k, v in out.skips.most_common() if v)
            hint = refusal_hint(out.keys_seen)
            main = main_part(out.keys_seen) if LOSS not in fields.overrides else None
            if main is not None:  # parts that no trainer sums: the main one, as ``--map loss=<it>`` reads it
                try:
                    read = self.parse(
                        source, FieldMap({**fields.overrides, LOSS: main}, shared=fields.shared), first_epoch
                    )
                except ParseError:
                    read = None  # the part holds no steps either: the refusal below names the choices
                if read is not None and read.table.height:
                    note = main_part_note(main, out.keys_seen)
                    return dataclasses.replace(read, notes=(note, *read.notes)) if note else read
            refusal = (  # the choice first: the message is cut at 400 characters
                f"{source.name}: no training steps in {records} lines: {hint}; keys seen: {seen}"
                if hint
                else f"{source.name}: no training steps found in {records} lines "
                f"(skipped: {reasons or 'nothing'}; keys seen: {seen})"
            )
            events = _events(_with(events_in, others), table, markers)
            if not failures(events):
                raise ParseError(refusal)
            # the run died before its first logged step: its failure is the answer, not a refusal
            return ParseResult(
                table=table,
                lines_read=lines,
                skip_reasons={k: v for k, v in out.skips.items() if v},
                total_steps=markers.planned_steps,
                notes=tuple(notes),
                markers=markers,
                keys_seen=tuple(sorted(out.keys_seen | set(out.aliases))),
                events=events,
                planned_source="header" if markers.planned_steps else None,
                refusal=refusal,
            )
        if (picked := total_note(out.total_loss)) is not None:
            notes.append(picked)
        if out.ppl_loss:
            notes.append("loss derived as ln(perplexity): the log prints perplexity only")
        total = _total(out)
        lossless = _lossless(out)
        per_epoch = _epoch_position(table, notes) if out.epoch_position and not from_order else None
        return ParseResult(
            table=table.with_columns(pl.col(STEP).cast(pl.Int64)),
            evals=evals,
            lines_read=lines,
            records_read=records if records > lines else 0,
            skip_reasons={k: v for k, v in out.skips.items() if v},
            total_steps=total if total is not None else markers.planned_steps,
            steps_per_epoch=per_epoch,
            aliases=out.aliases,
            notes=tuple(notes),
            markers=markers,
            keys_seen=tuple(sorted(out.keys_seen | set(out.aliases))),
            steps_in_batches=in_batches,
            lossless_steps=_lossless_steps(lossless),
            lossless_rows=lossless,
            events=_events(_with(events_in, others), table, markers),
            config_facts=classes,
            step_from_order=from_order,
            planned_source="column" if total is not None else ("header" if markers.planned_steps else None),
            first_epoch=out.first_epoch,
        )
