"""Parse chunks of new complete lines with the batch parsers, keeping file line numbers."""

from __future__ import annotations

import re
from collections.abc import Mapping

import polars as pl

from logdoctor.errors import InputError, ParseError
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.chunkfacts import ChunkFacts
from logdoctor.ingest.parsers import Parser, ParseResult, sniff
from logdoctor.ingest.parsers.base import RESTART, require_rows
from logdoctor.ingest.parsers.csvlog import UnreadableTable
from logdoctor.ingest.parsers.events import scan_events
from logdoctor.ingest.parsers.lines import read_lines
from logdoctor.ingest.parsers.recordorder import BY_ORDER, continue_order
from logdoctor.ingest.parsers.text import RESTART_MARK, TextParser
from logdoctor.ingest.sources import Source
from logdoctor.model import BATCHES, BATCHES_TOTAL, LINE_NO, STEP

#: Formats written as one document (rewritten at each save), which cannot be read by appended lines.
WHOLE_DOCUMENT = frozenset({"hf_trainer_state", "tensorboard", "mlflow"})
_PREAMBLE_LINES = 64
_MARK = re.compile(RESTART_MARK.encode())
_PREAMBLE_BYTES = 16 * 1024


class ChunkParser:
    """Sniffs the format once from the head of the file, then hands each chunk of complete
    lines to that parser as an in-memory Source.

    The lines before the first step row (a CSV header, a banner; at most 64 lines / 16 KiB) are
    kept as a preamble and put in front of every later chunk, so that parsers that need a header
    read each chunk as they would read the whole file; rows and skip counts are corrected for it.
    """

    def __init__(self, source: str, fields: FieldMap) -> None:
        self.source = source
        self.fields = fields
        self.parser: Parser | None = None
        self.lines = 0
        self.rows = 0
        self.skipped: dict[str, int] = {}
        #: The last chunk's ParseResult (aliases, totals, notes), for readers that need them.
        self.result: ParseResult | None = None
        #: what every chunk read so far stated beyond its rows (markers in file lines)
        self.facts = ChunkFacts()
        self._preamble = b""
        self._preamble_lines = 0
        self._pre_skips: dict[str, int] | None = None
        self._last_order = 0
        self._restart_pending = False
        #: the epoch the derived steps of the chunks read so far counted from (ParseResult.first_epoch)
        self._first_epoch: int | None = None
        #: the highest step of the chunks before, and whether a progress bar of theirs reached N/N
        self._high: int | None = None
        self._bar_full = False

    def sniff(self, data: bytes, head: bytes | None = None) -> Parser | None:
        """Pick the parser from ``head`` (or ``data``) unless done; None while all is blank.

        Raises:
            InputError: binary content, or a format that is not appended to line by line.
        """
        if self.parser is None and (head or data).strip():
            self.parser = sniff(Source.from_bytes(self.source, head or data))
            if self.parser.name in WHOLE_DOCUMENT:
                raise InputError(
                    f"{self.source}: a {self.parser.name} file is rewritten whole, not appended "
                    "to; tail follows line logs (text, jsonl, csv): use `logdoctor analyze` on it"
                )
        return self.parser

    def parse(self, data: bytes) -> tuple[pl.DataFrame, pl.DataFrame]:
        """Step rows and evaluation rows of one chunk, with file line numbers."""
        n_lines = data.count(b"\n")
        if self.parser is None:
            self.lines += n_lines
            return pl.DataFrame(), pl.DataFrame()
        pre = self._preamble_lines
        try:
            result = require_rows(self._parse(self._preamble + data))
        except UnreadableTable as err:  # a CSV header fixes the columns: no later line can help
            raise InputError(f"{err} (the header fixes the columns: no later line can add one)") from None
        except (ParseError, InputError):  # no step, or a binary blob inside a long log
            self._skip("no training step", n_lines)
            if self.parser.name == "text":  # a crash or a stop printed after the last row is read all the same
                self.facts.add_events(scan_events(read_lines(data)), 0, self.lines)
            self._grow_preamble(data, n_lines)
            self.lines += n_lines
            return pl.DataFrame(), pl.DataFrame()
        self.result = result
        self._first_epoch = result.first_epoch if result.first_epoch is not None else self._first_epoch
        self.facts.add(result, pre, self.lines - pre)
        shift = pl.col(LINE_NO) + (self.lines - pre)
        table = result.table.filter(pl.col(LINE_NO) > pre).with_columns(shift)
        table = self._restarts(data, table)
        table = self._bar_resets(table)
        if result.step_from_order:  # numbered by record order: the count goes on across chunks
            if BY_ORDER in result.notes:
                table = continue_order(table, self._last_order)
            if table.height:
                self._last_order = int(table[STEP][-1])
        evals = result.evals
        if evals.height and LINE_NO in evals.columns:
            evals = evals.filter(pl.col(LINE_NO) > pre).with_columns(shift)
        if self.lines == 0 and table.height:
            self._grow_preamble(data, int(table[LINE_NO].min()) - 1)  # type: ignore[arg-type]
        self._skip_all(result.skip_reasons, self._preamble_skips(data, result) if pre else {})
        self.lines += n_lines
        self.rows += table.height
        return table, evals

    def _parse(self, data: bytes) -> ParseResult:
        """``data`` read by the sniffed parser; the text parser counts the steps it derives from a
        progress bar's epoch from the epoch the chunks before counted from: a later chunk of a
        Lightning console (``Epoch 1:`` on) holds no ``Epoch 0`` bar to tell that the counter
        starts at 0, and read alone it put epoch 1's steps on epoch 0's."""
        if self.parser is None:
            raise InputError(f"{self.source}: no format sniffed")
        source = Source.from_bytes(self.source, data)
        if isinstance(self.parser, TextParser):
            return self.parser.parse(source, self.fields, first_epoch=self._first_epoch)
        return self.parser.parse(source, self.fields)

    def _bar_resets(self, table: pl.DataFrame) -> pl.DataFrame:
        """``table`` without the ``0/N`` drawings of a progress bar below a step the chunks before
        wrote, as the whole read drops them (textshape.drop_bar_starts): Lightning resets its bar at
        an epoch's end and draws ``Epoch 0: 0/40`` with the last step's values, in a chunk of its own
        when the log is read as it grows."""
        if self.parser is None or self.parser.name != "text" or table.height == 0 or STEP not in table.columns:
            return table
        if BATCHES in table.columns and BATCHES_TOTAL in table.columns:
            self._bar_full |= bool((table[BATCHES] == table[BATCHES_TOTAL]).any())
            if self._bar_full and self._high is not None:
                before = pl.max_horizontal(pl.col(STEP).cum_max().shift(1), pl.lit(self._high))
                stale = ((pl.col(BATCHES) == 0) & (pl.col(STEP) < before)).fill_null(False)
                n = int(table.select(stale.sum()).item() or 0)
                if n:
                    self._skip("progress bar at 0/N", n)
                    table = table.filter(~stale)
        high = table[STEP].max()
        if high is not None:
            self._high = max(int(high), self._high or 0)  # type: ignore[arg-type]
        return table

    def _restarts(self, data: bytes, table: pl.DataFrame) -> pl.DataFrame:
        """``table`` with the restart flag on its first row when a "training started" line came
        after the last row of the chunks before, or before this chunk's first row: the text parser
        flags the step after such a line only when the line follows a step of the same chunk."""
        if self.parser is None or self.parser.name != "text":
            return table
        marks = [self.lines + i + 1 for i, line in enumerate(data.split(b"\n")) if _MARK.search(line)]
        if table.height == 0:
            self._restart_pending |= bool(marks)
            return table
        first, last = int(table[LINE_NO].min()), int(table[LINE_NO].max())  # type: ignore[arg-type]
        if self._restart_pending or any(m < first for m in marks):
            flag = pl.when(pl.col(LINE_NO) == first).then(1.0)
            old = pl.col(RESTART).cast(pl.Float64) if RESTART in table.columns else pl.lit(0.0)
            table = table.with_columns(flag.otherwise(old).alias(RESTART))
        self._restart_pending = any(m > last for m in marks)
        return table

    def _grow_preamble(self, data: bytes, n_lines: int) -> None:
        if self.rows or self._preamble_lines >= _PREAMBLE_LINES or n_lines <= 0:
            return
        lines = data.split(b"\n")[: min(n_lines, _PREAMBLE_LINES - self._preamble_lines)]
        # an fp16 overflow line counts a skipped step of the row after it: read again in front of
        # every chunk, it would be counted once more on each chunk's first row
        kept = [line for line in lines if b"overflow" not in line.lower()]
        block = b"".join(line + b"\n" for line in kept)
        if len(self._preamble) + len(block) <= _PREAMBLE_BYTES:
            self._preamble += block
            self._preamble_lines += len(kept)

    def _preamble_skips(self, data: bytes, result: ParseResult) -> Mapping[str, int]:
        """The skip counts the preamble adds to a chunk: those of the preamble followed by one
        step line of the chunk (a CSV header counts none, a banner line one "no step" each).
        Computed once, when the preamble no longer grows."""
        if self._pre_skips is not None:
            return self._pre_skips
        first = result.table.filter(pl.col(LINE_NO) > self._preamble_lines)[LINE_NO].min()
        if first is None or self.parser is None:
            return {}
        line = (self._preamble + data).split(b"\n")[int(first) - 1]  # type: ignore[arg-type]
        # a chunk with steps: the preamble is final, and so is what it adds (none when the step line
        # alone does not parse: remembered too, or every later chunk would parse the probe again)
        try:
            probe = require_rows(self._parse(self._preamble + line + b"\n"))
        except (ParseError, InputError):
            self._pre_skips = {}
            return self._pre_skips
        self._pre_skips = dict(probe.skip_reasons)
        return self._pre_skips

    def _skip_all(self, reasons: Mapping[str, int], preamble: Mapping[str, int]) -> None:
        """Add a chunk's skip counts, less those of the preamble (counted once already)."""
        for reason, n in reasons.items():
            self._skip(reason, n - preamble.get(reason, 0))

    def _skip(self, reason: str, n: int) -> None:
        if n > 0:
            self.skipped[reason] = self.skipped.get(reason, 0) + n
