"""Write .wandb transaction logs by hand (block framing + the protobuf fields logdoctor reads)."""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterable

from logdoctor.ingest.wandb_records import BLOCK, MAGIC


def ld(num: int, data: bytes) -> bytes:
    """A length-delimited protobuf field (lengths < 2**14 here)."""
    n = len(data)
    size = bytes([n]) if n < 128 else bytes([(n & 0x7F) | 0x80, n >> 7])
    return bytes([num << 3 | 2]) + size + data


def varint(n: int) -> bytes:
    """A protobuf varint."""
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def history(step: int, **items: float) -> bytes:
    body = b"".join(
        ld(1, ld(1, k.encode()) + b"\x82\x01" + bytes([len(json.dumps(v))]) + json.dumps(v).encode())
        for k, v in items.items()
    )
    return ld(2, body + ld(2, b"\x08" + varint(step)))


def write_log(records: Iterable[bytes]) -> bytes:
    """Frame records as wandb does: FULL, or FIRST/MIDDLE/LAST across 32 KiB blocks."""
    out = bytearray(MAGIC + b"\x00")
    for rec in records:
        first = True
        while True:
            left = BLOCK - len(out) % BLOCK
            if left < 7:
                out += b"\x00" * left
                continue
            chunk, rec = rec[: left - 7], rec[left - 7 :]
            kind = (1 if not rec else 2) if first else (4 if not rec else 3)
            out += struct.pack("<IHB", zlib.crc32(chunk, zlib.crc32(bytes([kind]))), len(chunk), kind) + chunk
            first = False
            if not rec:
                break
    return bytes(out)
