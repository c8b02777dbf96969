"""The .wandb record reader: LevelDB-style block framing, fed whole or in arbitrary pieces."""

from __future__ import annotations

import pytest

from logdoctor.errors import ParseError
from logdoctor.ingest.wandb_records import HEADER_LEN, RecordReader, decode
from tests.wandb_support import history, ld, write_log


def test_pieces_and_whole_read_the_same_records() -> None:
    big = ld(4, ld(3, b"x" * 9000))  # an output record spanning chunks
    recs = [history(i % 100, loss=1.0 + i) for i in range(3000)] + [big] * 10
    data = write_log(recs)
    whole = RecordReader("w").feed(data)
    reader = RecordReader("p")
    pieces: list[bytes] = []
    for i in range(0, len(data), 4093):
        pieces += reader.feed(data[i : i + 4093])
    assert whole == pieces == recs
    first = decode(recs[5])
    assert first is not None and first.kind == "history" and first.items == {"loss": 6.0} and first.step == 5
    out = decode(big)
    assert out is not None and out.kind == "output" and len(out.line) == 9000


def test_bad_checksum_skips_the_chunk_and_counts_it() -> None:
    data = bytearray(write_log([history(1, loss=2.0), history(2, loss=1.5)]))
    data[HEADER_LEN + 8] ^= 0xFF  # inside the first record's payload
    reader = RecordReader("c")
    recs = reader.feed(bytes(data))
    assert reader.corrupt == 1 and [decode(r).step for r in recs] == [2]  # type: ignore[union-attr]


def test_not_a_wandb_log() -> None:
    with pytest.raises(ParseError, match="not a W&B transaction log"):
        RecordReader("x").feed(b"step 1 loss=2\n")


def test_the_sniffs_header_is_the_start_of_the_magic() -> None:
    from logdoctor.ingest.parsers import wandb
    from logdoctor.ingest.wandb_records import MAGIC

    assert MAGIC.startswith(wandb._HEADER)  # a .wandb file is never ruled out before the reader looks
