"""Read a JSON object whose one large array member is streamed, element by element, never decoded whole.

``read_object(data, key, sink)`` decodes the top-level object of ``data`` (UTF-8 bytes, undecodable
bytes replaced as ``bytes.decode(errors="replace")`` does) a block at a time with the standard
library's own decoder: every member but ``key`` is returned in a dict, the elements of the array
under ``key`` go one by one to ``sink``, so the text and the decoded document are never both held
whole. Anything ``json.loads`` would not read the same way (not an object, ``key`` twice or not an
array, a syntax error, data after the object) raises ``NotStreamable``, and the caller reads the
document whole, as it did before, which reports the error as it always has.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable
from typing import Any

#: Bytes decoded at a time.
BLOCK = 1 << 22
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
#: What follows a complete value in valid JSON.
_AFTER = frozenset(" \t\n\r,]}:")


class NotStreamable(ValueError):
    """The document cannot be streamed to the same result as ``json.loads``; read it whole."""


class _Text:
    """Decoded text of ``data`` with a moving start: what was parsed is dropped."""

    def __init__(self, data: bytes, block: int) -> None:
        self._data = memoryview(data)
        self._block = block
        self._next = 0
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.buf = ""
        self.pos = 0

    def more(self) -> bool:
        """Decode the next block onto the buffer (dropping what was parsed); False at the end."""
        if self._next >= len(self._data):
            return False
        end = min(self._next + self._block, len(self._data))
        text = self._utf8.decode(self._data[self._next : end], final=end == len(self._data))
        self._next = end
        self.buf, self.pos = self.buf[self.pos :] + text, 0
        return True

    def skip_ws(self) -> str:
        """Skip whitespace; the next character, or "" at the end of the data."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf) or not self.more():
                return self.buf[self.pos : self.pos + 1]

    def expect(self, chars: str) -> str:
        """The next non-space character, which must be one of ``chars``; it is consumed."""
        ch = self.skip_ws()
        if not ch or ch not in chars:
            raise NotStreamable(f"expected one of {chars!r} at a character {ch!r}")
        self.pos += 1
        return ch

    def value(self) -> Any:
        """The JSON value at the position. A value that fails, or is not followed by a character
        that ends a value in valid JSON (a number may go on: ``2`` of ``2.5``), is decoded again
        with more text, until the data ends."""
        self.skip_ws()
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
            except RecursionError:
                raise NotStreamable("nested too deeply to stream") from None
            except ValueError:
                if self.more():
                    continue
                raise NotStreamable("not valid JSON") from None
            if (end < len(self.buf) and self.buf[end] in _AFTER) or not self.more():
                self.pos = end
                return obj


def read_object(data: bytes, key: str, sink: Callable[[Any], None], block: int = BLOCK) -> dict[str, Any]:
    """The top-level object's members but ``key``; the elements of the array under ``key`` go to ``sink``.

    Raises:
        NotStreamable: see the module's docstring; the caller should then use ``json.loads``.
    """
    text = _Text(data, block)
    members: dict[str, Any] = {}
    seen = False
    text.expect("{")
    if text.skip_ws() == "}":
        text.pos += 1
    else:
        while True:
            name = text.value()
            if not isinstance(name, str):
                raise NotStreamable("an object key that is not a string")
            text.expect(":")
            if name == key:
                if seen or text.skip_ws() != "[":
                    raise NotStreamable(f"{key!r} twice, or not an array")
                seen = True
                _array(text, sink)
            else:
                members[name] = text.value()
            if text.expect(",}") == "}":
                break
    if text.skip_ws():
        raise NotStreamable("data after the object")
    if not seen:
        raise NotStreamable(f"no {key!r} member")
    return members


def _array(text: _Text, sink: Callable[[Any], None]) -> None:
    text.expect("[")
    if text.skip_ws() == "]":
        text.pos += 1
        return
    while True:
        sink(text.value())
        if text.expect(",]") == "]":
            return
