"""Pick tail mode's view for ``--format``: the live terminal view, plain lines or JSON lines."""

from __future__ import annotations

import os
import sys
from typing import TextIO

from logdoctor.errors import ConfigError, OutputError
from logdoctor.tail.stream import JsonlStream, PlainStream, StreamRenderer


def stream_renderer(fmt: str, out: TextIO | None = None) -> StreamRenderer:
    """The renderer for ``--format`` (auto: the live view on a terminal, plain lines otherwise).

    Raises:
        ConfigError: an unknown format.
    """
    out = out if out is not None else sys.stdout
    if fmt == "auto":
        fmt = "live" if out.isatty() else "plain"
    if fmt == "live":
        from logdoctor.tail.live import LiveStream  # rich.live only when the live view is used

        return LiveStream(out)
    if fmt in STREAM_RENDERERS:
        return STREAM_RENDERERS[fmt](out)
    raise ConfigError(f"unknown tail format {fmt!r} (known: auto, live, {', '.join(STREAM_RENDERERS)})")


def stdout_renderer(fmt: str, *, effects: bool) -> StreamRenderer:
    """The renderer for ``--format`` on stdout. Started with stdout closed (``>&-``), tail still
    runs when it has ``effects`` beyond its view (a hook, an exit code to give): the view goes
    nowhere; without them there is nothing to do.

    Raises:
        OutputError: stdout is closed and tail has no other effect.
        ConfigError: an unknown format.
    """
    if sys.stdout is not None:
        return stream_renderer(fmt)
    if not effects:
        raise OutputError("stdout is closed; tail writes its events there (or give --on-finding or --exit-on)")
    return stream_renderer("plain" if fmt in ("auto", "live") else fmt, open(os.devnull, "w"))


STREAM_RENDERERS: dict[str, type[StreamRenderer]] = {r.name: r for r in (PlainStream, JsonlStream)}
