"""A streaming filter for degenerate line logs: runs of NUL bytes skipped, over-long lines cut.

Both in bounded memory and one pass: the input is fed in blocks no larger than the line limit, so
a line can only be too long across block boundaries, and each block costs a few ``find`` calls and
one NUL-run search at C speed, whatever the block holds.

- **NUL runs**: ``min_nul`` (4 KiB: a file-system block, as a crash or a preallocated file leaves)
  or more NUL bytes in a row are dropped; each run is recorded with its offset in the
  (decompressed) input and its size. Shorter runs stay: they are how binary files are told apart.
- **Long lines**: a line longer than ``max_line`` bytes keeps its first ``max_line`` bytes and its
  line end; the rest is dropped and the line counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from logdoctor.model import NulRun

#: Longest line kept whole (bytes); longer lines are cut to it.
MAX_LINE_BYTES = 1024 * 1024
#: Shortest run of NUL bytes that is skipped (bytes).
MIN_NUL_RUN = 4096
#: NUL runs recorded one by one; later ones are only counted.
KEEP_RUNS = 64


class LineFilter:
    """Feed blocks in order (each at most ``max_line`` bytes); get the filtered bytes back.

    A line that began while ``cut`` was undecided is cut as soon as it is decided (it may then keep
    more than ``max_line`` bytes: at most the head read to sniff the format).
    """

    def __init__(
        self, max_line: int = MAX_LINE_BYTES, min_nul: int = MIN_NUL_RUN, cut: bool | None = True, start: int = 0
    ) -> None:
        if max_line < 1 or min_nul < 1:
            raise ValueError("max_line and min_nul must be positive")
        self.max_line = max_line
        self.min_nul = min_nul
        self.lines_cut = 0
        self.runs: list[NulRun] = []
        self.more_runs = 0
        self.more_nul_bytes = 0
        self._nuls = re.compile(rb"\x00{%d,}" % min_nul)
        self._offset = start  # input offset of the next byte fed
        self._held = b""  # trailing NULs too few to call a run yet (input before ``_offset``)
        self._open: tuple[int, int] | None = None  # the NUL run that may go on: (offset, size)
        self._line = 0  # bytes of the current line passed on
        self._cutting = False
        #: whether long lines are cut: None while undecided (the head is read to sniff the format;
        #: a whole JSON document on one line is not cut), then True or False
        self.cut = cut

    # ------------------------------------------------------------------ NUL runs
    def feed(self, block: bytes) -> Iterator[bytes]:
        """The filtered bytes for the next ``block`` of input."""
        start = self._offset - len(self._held)
        buf = self._held + block if self._held else block
        self._offset += len(block)
        self._held = b""
        pos = 0
        if self._open is not None:
            pos = len(buf) - len(buf.lstrip(b"\x00")) if buf[:1] == b"\x00" else 0
            at, size = self._open
            self._open = (at, size + pos)
            if pos == len(buf):
                return
            self._close()
        for m in self._nuls.finditer(buf, pos):
            yield from self._lines(buf[pos : m.start()])
            self._open = (start + m.start(), m.end() - m.start())
            pos = m.end()
            if pos < len(buf):
                self._close()
        if pos < len(buf):
            rest = buf[pos:]
            keep = len(rest.rstrip(b"\x00"))  # fewer than min_nul trailing NULs: finditer took longer
            self._held = rest[keep:]
            yield from self._lines(rest[:keep])

    def finish(self) -> Iterator[bytes]:
        """What is left at the end of the input."""
        self._close()
        held, self._held = self._held, b""
        yield from self._lines(held)

    def _close(self) -> None:
        if self._open is None:
            return
        at, size = self._open
        self._open = None
        if len(self.runs) < KEEP_RUNS:
            self.runs.append(NulRun(at, size))
        else:
            self.more_runs += 1
            self.more_nul_bytes += size

    # ------------------------------------------------------------------ long lines
    def _lines(self, data: bytes) -> Iterator[bytes]:
        """Cut over-long lines; ``data`` may be longer than the limit (a block plus held NULs)."""
        for i in range(0, len(data), self.max_line):
            yield from self._piece(data[i : i + self.max_line])

    def _piece(self, data: bytes) -> Iterator[bytes]:
        """``data`` is at most ``max_line`` bytes: only its first and last line can be too long."""
        if not data:
            return
        first = data.find(b"\n")
        if first < 0:
            yield from self._extend(data)
            return
        yield from self._extend(data[:first])
        self._line, self._cutting = 0, False
        last = data.rfind(b"\n")
        yield data[first : last + 1]  # complete lines, each shorter than the piece
        self._line = len(data) - last - 1
        yield data[last + 1 :]

    def _extend(self, data: bytes) -> Iterator[bytes]:
        """More bytes of the current line (no line end among them)."""
        if self._cutting or not data:
            return
        room = max(0, self.max_line - self._line)
        if len(data) > room and self.cut:
            self.lines_cut += 1
            self._cutting = True
            data = data[:room]
        self._line += len(data)
        yield data

    # ------------------------------------------------------------------ results
    @property
    def pending(self) -> NulRun | None:
        """The NUL run still going at the end of what was fed (not yet in ``runs``)."""
        return NulRun(*self._open) if self._open is not None else None

    @property
    def nul_bytes(self) -> int:
        """NUL bytes skipped in all."""
        return sum(r.size for r in self.runs) + self.more_nul_bytes

    @property
    def changed(self) -> bool:
        """True when something was skipped or cut."""
        return bool(self.lines_cut or self.runs)


def needs_filter(blocks: Iterable[bytes], max_line: int, min_nul: int) -> bool:
    """Whether a scan of the input (blocks of at most ``max_line`` bytes) finds a NUL run of
    ``min_nul`` bytes or a line longer than ``max_line``: a cheap pass that copies nothing big."""
    nuls = b"\x00" * min_nul
    line = 0
    zeros = 0  # NUL bytes in a row at the end of what was scanned
    for block in blocks:
        if nuls in block:
            return True
        lead = len(block) - len(block.lstrip(b"\x00")) if block[:1] == b"\x00" else 0
        if zeros + lead >= min_nul:
            return True
        zeros = zeros + lead if lead == len(block) else len(block) - len(block.rstrip(b"\x00"))
        first = block.find(b"\n")
        if first < 0:
            line += len(block)
        else:
            if line + first > max_line:
                return True
            line = len(block) - block.rfind(b"\n") - 1
        if line > max_line:
            return True
    return False
