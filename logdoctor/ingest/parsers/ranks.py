"""Several ranks' lines interleaved in one log: each line's rank from its launcher's tag.

Every process of a distributed run that writes to one console gives the log its own metric lines;
read as one series they are N records per step. The launchers tag each line with its rank, each in
its own spelling (the group is the rank):

- torchrun ``--tee``/``--redirects``: ``[default0]:`` (torch/distributed/elastic/multiprocessing/
  tail_log.py: ``header = f"[{self._name}{local_rank}]:"``, the name being the ``--role``, default
  ``default``); ``[rank0]:`` from ``--log-line-prefix-template "[rank${rank}]:"`` and from
  distributed_c10d's exception hook (``f"[rank{get_rank()}]"`` before each traceback line);
- OpenMPI ``mpirun --tag-output``: ``[jobid,rank]<stdout>:`` / ``<stderr>:``;
- Slurm ``srun --label``: ``0: ``;
- icefall/k2's ``setup_logger`` (icefall/utils.py: ``"%(asctime)s %(levelname)s [%(filename)s:%(lineno)d]
  ({rank}/{world_size}) %(message)s"``): ``(0/4)`` after the source tag.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.lines import LINE, LINE_NO, read_lines

#: The launchers' tags (module docstring), the rank as group 1.
TAGS = (
    r"^\[[A-Za-z_]*(\d{1,5})\]:",
    r"^\[\d+,(\d{1,5})\]<std(?:out|err)>:",
    r"^(\d{1,4}): ",
    r"\[[\w./-]+:\d+\] \((\d{1,5})/\d{1,5}\) ",
)
#: The tags as printed (for the note), without what comes before icefall's ``(r/w)``.
_SPELLED = (
    r"^\[[A-Za-z_]*\d{1,5}\]:",
    r"^\[\d+,\d{1,5}\]<std(?:out|err)>:",
    r"^\d{1,4}:",
    r"\(\d{1,5}/\d{1,5}\)",
)
#: Literal text of every tag (``]:``, ``]<std``, icefall's ``] (``, srun's ``0: ``/``1: `` at a line
#: start), found by a byte search: a log without any is never split into lines here.
_LITERALS = (b"]:", b"]<std", b"] (", b"\n0: ", b"\n1: ")
#: The tags are looked for in the log's first bytes only: every rank of a launch writes from its start
#: (its banner, its first steps), and five scans of a whole 200 MB log cost ~0.7 s of a 1M-line read.
SCREEN_BYTES = 4 * 2**20
#: Each rank tags at least this many lines on average: a number before a colon that each line
#: holds once (a step printed as ``120: loss 2.1``) is no rank.
MIN_LINES_PER_RANK = 2


@dataclass(frozen=True, slots=True)
class RankTags:
    """The tagged lines of a log of several ranks: line numbers (sorted), ranks, and one tag as
    printed per rank."""

    line_no: np.ndarray
    rank: np.ndarray
    spelled: dict[int, str]

    def ranks_of(self, line_nos: np.ndarray) -> list[int]:
        """The ranks that tag these lines, sorted (untagged lines have none)."""
        at = np.searchsorted(self.line_no, line_nos)
        at = np.minimum(at, self.line_no.size - 1)
        hit = self.line_no[at] == line_nos
        return sorted({int(r) for r in self.rank[at[hit]]})


def rank_tags(data: bytes) -> RankTags | None:
    """The rank of every tagged line when two or more ranks write the log, interleaved; None for a
    log of one rank, an untagged log, or numbers before a colon that only rise (an epoch or step
    prefix, each block of lines after the last)."""
    head = data[:SCREEN_BYTES]
    if not any(t in head for t in _LITERALS) and not head.startswith((b"0: ", b"1: ")):
        return None
    line = pl.col(LINE)
    lines = read_lines(data).unique(LINE_NO, keep="first", maintain_order=True)
    lines = lines.filter(line.str.contains("|".join(f"(?:{p})" for p in TAGS)))
    found = lines.select(
        LINE_NO,
        pl.coalesce([line.str.extract(p, 1) for p in TAGS]).cast(pl.Int64, strict=False).alias("rank"),
        pl.coalesce([line.str.extract(f"({p})", 1) for p in _SPELLED]).alias("tag"),
    ).drop_nulls("rank")
    ranks = found["rank"].unique()
    if ranks.len() < 2 or found.height < MIN_LINES_PER_RANK * ranks.len():
        return None
    rank = found["rank"].to_numpy()
    if (np.diff(rank) >= 0).all():
        return None  # never back to a lower rank: blocks in order, not interleaved writers
    first = found.unique("rank", keep="first", maintain_order=True)
    spelled = {int(r): str(t).strip() for r, t in zip(first["rank"], first["tag"], strict=True)}
    return RankTags(found[LINE_NO].to_numpy(), rank, spelled)


def keep_rank(data: bytes, tags: RankTags, rank: int) -> tuple[bytes, pl.DataFrame]:
    """``data`` with the lines other ranks tag left empty (line numbers kept), and those lines
    (``line_no``, ``line``): still read for failures, a crash of any rank being the run's."""
    text = data.replace(b"\r\n", b"\n").split(b"\n")
    drop = tags.line_no[tags.rank != rank]
    dropped = [text[n - 1] for n in drop]
    for n in drop:
        text[n - 1] = b""
    others = pl.DataFrame(
        [
            pl.Series(LINE_NO, drop, dtype=pl.Int64),
            pl.Series(LINE, [t.decode("utf-8", "replace") for t in dropped], dtype=pl.String),
        ]
    )
    return b"\n".join(text), others


def rank_note(tags: RankTags, with_rows: list[int]) -> str:
    """The note a report prints once: which ranks, and whose rows are read."""
    low, high = min(tags.spelled), max(tags.spelled)
    return (
        f"{len(tags.spelled)} ranks interleaved (tags {tags.spelled[low]}..{tags.spelled[high]}); "
        f"rank {with_rows[0]}'s rows read ({len(with_rows)} ranks print metric lines), "
        "the other ranks' lines only for failures"
    )
