"""Read a W&B ``.wandb`` transaction log: block framing, then the few protobuf fields we need."""

# The file is a ``:W&B`` header (magic 0xBEE1, version 0) followed by 32 KiB blocks of chunks, each
# ``crc32(type + data)`` (4 bytes), ``len`` (2), ``type`` (1: full, 2: first, 3: middle, 4: last),
# as in LevelDB's log format. Each record is a ``wandb_internal.Record`` protobuf; field numbers
# are part of W&B's wire contract, so this reader needs no ``wandb`` package.

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from logdoctor.errors import ParseError

MAGIC = b":W&B\xe1\xbe"
HEADER_LEN = 7
BLOCK = 32 * 1024
_CHUNK_HEAD = 7
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
# Record fields (wandb_internal.proto)
_HISTORY, _OUTPUT, _CONFIG, _OUTPUT_RAW, _RUN, _EXIT = 2, 4, 5, 13, 17, 18


def is_wandb_log(head: bytes) -> bool:
    """True when ``head`` opens with the W&B transaction-log header."""
    return head.startswith(MAGIC) and len(head) >= HEADER_LEN and head[6] == 0


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) of a protobuf message: ints, bytes or 8/4-byte blobs."""
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        num, wire = tag >> 3, tag & 7
        value: int | bytes
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            n, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + n], pos + n
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield num, wire, value


@dataclass(slots=True)
class RecordReader:
    """Incremental reader: ``feed`` appended bytes, get the complete records seen so far.

    It keeps the file offset, the block position and a partial multi-chunk record between calls,
    so tail mode can follow a ``.wandb`` file as wandb writes it.
    """

    name: str
    offset: int = 0
    _pending: bytearray = field(default_factory=bytearray)
    _buf: bytes = b""
    corrupt: int = 0

    def feed(self, data: bytes) -> list[bytes]:
        """The records completed by ``data`` (the bytes that follow what was fed before)."""
        buf = self._buf + data
        base = self.offset - len(self._buf)
        pos = 0
        if base == 0:
            if len(buf) < HEADER_LEN:
                self._buf = buf
                return []
            if not is_wandb_log(buf):
                raise ParseError(f"{self.name}: not a W&B transaction log (bad header)")
            pos = HEADER_LEN
        out: list[bytes] = []
        while True:
            left = BLOCK - (base + pos) % BLOCK
            if left < _CHUNK_HEAD:  # block trailer: zero padding
                if pos + left > len(buf):
                    break
                pos += left
                continue
            if pos + _CHUNK_HEAD > len(buf):
                break
            crc, n, kind = struct.unpack_from("<IHB", buf, pos)
            if pos + _CHUNK_HEAD + n > len(buf):
                break
            data_ = buf[pos + _CHUNK_HEAD : pos + _CHUNK_HEAD + n]
            pos += _CHUNK_HEAD + n
            if kind == 0 and n == 0 and crc == 0:  # preallocated zeros: nothing written yet
                pos -= _CHUNK_HEAD
                break
            if zlib.crc32(data_, zlib.crc32(bytes([kind]))) != crc:
                self.corrupt += 1
                self._pending.clear()
                continue
            if kind == _FULL:
                out.append(bytes(data_))
            elif kind == _FIRST:
                self._pending = bytearray(data_)
            elif kind == _MIDDLE:
                self._pending += data_
            elif kind == _LAST:
                out.append(bytes(self._pending + data_))
                self._pending.clear()
        self._buf = buf[pos:]
        self.offset = base + len(buf)
        return out


def _item(buf: bytes) -> tuple[str, Any]:
    """(dotted key, value) of a HistoryItem or ConfigItem."""
    key, nested, value = "", [], None
    for num, wire, v in fields(buf):
        if num == 1:
            key = v.decode("utf-8", "replace")
        elif num == 2:
            nested.append(v.decode("utf-8", "replace"))
        elif num == 16 or (num in (7, 8) and wire == 2):
            try:
                value = json.loads(v.decode("utf-8", "replace")) if num != 7 else v.decode()
            except (ValueError, RecursionError):  # not JSON, or nested past Python's parser: no value
                value = None
        elif num == 6 and wire == 1:
            value = struct.unpack("<d", v)[0]
        elif num == 5 and wire == 0:
            value = (v >> 1) ^ -(v & 1)
        elif num == 4 and wire == 0:
            value = bool(v)
    return ("/".join(nested) if nested else key), value


@dataclass(frozen=True, slots=True)
class WandbRecord:
    """One record we use: ``kind`` is history, config or output; ``items`` key -> value."""

    kind: str
    items: dict[str, Any]
    step: int | None = None
    line: str = ""


def _history(buf: bytes) -> WandbRecord:
    items: dict[str, Any] = {}
    step = None
    for num, _, v in fields(buf):
        if num == 1:
            k, val = _item(v)
            items[k] = val
        elif num == 2:
            step = next((x for n, _, x in fields(v) if n == 1), 0)
    return WandbRecord("history", items, step=step)


def _config(buf: bytes) -> WandbRecord:
    items = dict(_item(v) for num, _, v in fields(buf) if num == 1)
    return WandbRecord("config", items)


def decode(record: bytes) -> WandbRecord | None:
    """The history, config, output or exit content of a Record; None for every other kind."""
    try:
        for num, wire, v in fields(record):
            if wire != 2:
                continue
            if num == _HISTORY:
                return _history(v)
            if num == _CONFIG:
                return _config(v)
            if num == _RUN:
                cfg = next((x for n, _, x in fields(v) if n == 4), None)
                return _config(cfg) if cfg is not None else None
            if num == _EXIT:  # RunExitRecord: exit_code (field 1, 0 when absent)
                code = next((x for n, w, x in fields(v) if n == 1 and w == 0), 0)
                return WandbRecord("exit", {"exit_code": code - (1 << 32) if code >= 1 << 31 else code})
            if num in (_OUTPUT, _OUTPUT_RAW):
                line = next((x for n, _, x in fields(v) if n == 3), b"")
                return WandbRecord("output", {}, line=line.decode("utf-8", "replace"))
    except (ValueError, struct.error, UnicodeDecodeError):
        return None
    return None
