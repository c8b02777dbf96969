"""How a run stopped, as its log prints it: CUDA OOM, NCCL timeout, a killed worker, SIGKILL, a traceback..."""

from __future__ import annotations

import re
from typing import NamedTuple

import polars as pl

from logdoctor.ingest.parsers.lines import LINE, LINE_NO
from logdoctor.ingest.parsers.screen import Lines
from logdoctor.model import RunEnding


class Kind(NamedTuple):
    """One way a run stops: its name, the lines that say it, the cause in plain words."""

    name: str
    pattern: str
    cause: str


#: Most specific first: a traceback that ends in ``torch.cuda.OutOfMemoryError`` is an OOM, one
#: that ends in ``KeyboardInterrupt`` a stop by hand; ``exception`` is any other traceback.
KINDS: tuple[Kind, ...] = (
    Kind("cuda_oom", r"CUDA out of memory|cuda\.OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED|HIP out of memory"
         r"|MPS backend out of memory|RESOURCE_EXHAUSTED: Out of memory|CUDA error: out of memory",
         "the GPU ran out of memory"),
    Kind("nccl_timeout", r"(?i)watchdog caught collective operation timeout|collective operation timeout"
         r"|ProcessGroupNCCL.{0,80}time(?:d )?out|NCCL.{0,40}(?:timeout|timed out)|DistBackendError|NCCL error",
         "an NCCL collective operation timed out or failed; a rank stalled, died or lost its network"),
    Kind("dataloader_killed", r"DataLoader worker \(pid.{0,40}\) (?:is killed by signal|exited unexpectedly)",
         "a DataLoader worker process was killed; host memory or shared memory ran out"),
    Kind("nan_guard", r"(?i)loss is nan|nan loss detected|detected (?:nan|inf)\b|invalid loss, terminating"
         r"|non-finite loss|FloatingPointError|minimum loss scale reached",
         "a NaN/inf guard stopped training; the loss or gradients became NaN/inf"),
    Kind("killed", r"^\s*Killed\s*$|oom-kill|Out of memory: Killed process|Signal 9 \(SIGKILL\)|SIGKILL"
         r"|exitcode\s*:\s*-9\b",
         "the process was killed with SIGKILL, usually by the host's out-of-memory killer or the job scheduler"),
    Kind("time_limit", r"DUE TO TIME LIMIT|CANCELLED AT \S+|DUE TO PREEMPTION",
         "the job scheduler stopped the job: time limit, cancellation or preemption"),
    Kind("terminated", r"got signal: 15\b|Signal 15 \(SIGTERM\)|\bSIGTERM\b|exitcode\s*:\s*-15\b",
         "the process got SIGTERM: the job scheduler or a person stopped it"),
    Kind("keyboard_interrupt", r"^\s*KeyboardInterrupt\b|\^C.*Traceback",
         "a person stopped it with Ctrl-C, a KeyboardInterrupt"),
    Kind("exception", r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit)\b:?",
         "an uncaught Python exception"),
)
TRACEBACK = r"Traceback \(most recent call last\)"
#: Lines of one failure block are at most this many lines apart (a traceback's frames).
BLOCK_GAP = 60
_ANY = "|".join(f"(?:{k.pattern})" for k in KINDS) + f"|{TRACEBACK}"


def _kind(text: str) -> Kind | None:
    return next((k for k in KINDS if re.search(k.pattern, text)), None)  # re caches the compiled patterns


def _ending(block: list[tuple[int, str]]) -> RunEnding:
    """The ending one failure block states: its most specific kind, at the last line that says it
    (a traceback's exception line); a traceback whose exception line is missing is an exception."""
    ranked = [(KINDS.index(k), -i) for i, (_, text) in enumerate(block) if (k := _kind(text)) is not None]
    if not ranked:
        line, text = block[0]
        return RunEnding("exception", KINDS[-1].cause, line, text.strip()[:120], line)
    rank, neg = min(ranked)
    kind, (line, text) = KINDS[rank], block[-neg]
    cause = f"{kind.cause}: {text.strip()[:120]}" if kind.name == "exception" else kind.cause
    return RunEnding(kind.name, cause, line, text.strip()[:120], block[0][0])


def scan_endings(lines: pl.DataFrame) -> tuple[RunEnding, ...]:
    """Every failure block of a text log (columns ``line_no`` and ``line``), in file order.

    Lines that name a failure (or open a traceback) and lie within ``BLOCK_GAP`` lines of each
    other are one block; each block states one ending (``_ending``). Which block ended which run
    is structure's decision (the first after the run's last training row).
    """
    if lines.height == 0 or LINE not in lines.columns:
        return ()
    if not Lines.of(lines[LINE]).may_match_any([k.pattern for k in KINDS] + [TRACEBACK]):
        return ()  # _ANY is these patterns' alternation
    hits = lines.filter(pl.col(LINE).str.contains(_ANY)).select(LINE_NO, LINE)
    if hits.height == 0:
        return ()
    blocks: list[list[tuple[int, str]]] = []
    for line, text in hits.iter_rows():
        if blocks and line - blocks[-1][-1][0] <= BLOCK_GAP:
            blocks[-1].append((line, text))
        else:
            blocks.append([(line, text)])
    return tuple(_ending(b) for b in blocks)


def ending_after(endings: tuple[RunEnding, ...], last_line: int | None, stop: int | None = None) -> RunEnding | None:
    """The ending of a run whose last training row is on ``last_line``: the most specific failure
    block after it (and before ``stop``, the next run's first line); None when none follows."""
    if last_line is None:
        return None
    after = [e for e in endings if e.line > last_line and (stop is None or e.line < stop)]
    if not after:
        return None
    names = [k.name for k in KINDS]
    return min(after, key=lambda e: (names.index(e.kind) if e.kind in names else len(names), -e.line))
