"""Source.from_bytes: in-memory bytes (plain or compressed) behave like a file's content."""

from __future__ import annotations

import gzip

from logdoctor.ingest.parsers import sniff
from logdoctor.ingest.sources import Source


def test_plain_bytes() -> None:
    src = Source.from_bytes("chunk", b"step 1 loss=2.5\n")
    assert src.path is None and src.compression is None
    assert src.text() == "step 1 loss=2.5\n" and src.head_text(6) == "step 1"
    assert sniff(src).name == "text"


def test_compressed_bytes_are_decompressed() -> None:
    src = Source.from_bytes("chunk.gz", gzip.compress(b"step 1 loss=2.5\n"))
    assert src.compression == "gzip" and src.read_bytes() == b"step 1 loss=2.5\n"
