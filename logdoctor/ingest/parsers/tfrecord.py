"""TFRecord framing (length, masked CRC-32C, data, CRC): recognise and write it by hand."""

from __future__ import annotations

import struct

_POLY = 0x82F63B78
_TABLE: list[int] = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of ``data``; fine for short buffers (headers, small records)."""
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    """The masked CRC that TFRecord stores."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def looks_like_tfrecord(head: bytes) -> bool:
    """True when ``head`` opens with a TFRecord frame whose length CRC checks out."""
    if len(head) < 12:
        return False
    (length,) = struct.unpack("<Q", head[:8])
    (crc,) = struct.unpack("<I", head[8:12])
    return 0 < length < (1 << 30) and crc == masked_crc(head[:8])


def frame(record: bytes) -> bytes:
    """One TFRecord frame holding ``record``."""
    header = struct.pack("<Q", len(record))
    return header + struct.pack("<I", masked_crc(header)) + record + struct.pack("<I", masked_crc(record))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num: int, wire: int, payload: bytes) -> bytes:
    key = _varint((num << 3) | wire)
    if wire == 2:
        return key + _varint(len(payload)) + payload
    return key + payload


def scalar_event(wall_time: float, step: int, tag: str, value: float) -> bytes:
    """A serialized ``Event{wall_time, step, summary{value{tag, simple_value}}}`` protobuf."""
    val = _field(1, 2, tag.encode()) + _field(2, 5, struct.pack("<f", value))
    summary = _field(1, 2, val)
    return _field(1, 1, struct.pack("<d", wall_time)) + _field(2, 0, _varint(step)) + _field(5, 2, summary)


def version_event(wall_time: float) -> bytes:
    """The ``Event{wall_time, file_version: "brain.Event:2"}`` every event file opens with."""
    return _field(1, 1, struct.pack("<d", wall_time)) + _field(3, 2, b"brain.Event:2")
