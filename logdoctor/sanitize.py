"""Sanitisers per output sink: what a log, a file name, a config or a tracker wrote is shown, never obeyed.

Every string a renderer, an error message or a tail view prints may carry text the user did not
write themselves: file names (``run\\x1b[31m.log``), W&B config values, MLflow params, column names.
Each sink has one function here and applies it to everything it prints, its own words included
(they hold no control characters, so they pass unchanged):

- ``terminal``: control characters (C0, DEL, C1, the bidirectional and zero-width format
  characters) shown escaped (``\\x1b``, ``\\n``, ``\\u202e``), so no ANSI/OSC sequence reaches the
  terminal and no line break can forge a line; URL credentials redacted.
- ``markdown``: ``terminal``, then Markdown's active punctuation backslash-escaped outside code
  spans (raw HTML, links, images, emphasis, table pipes are shown as text).
- ``workflow_data`` / ``workflow_property``: ``terminal`` (the Actions log renders ANSI colours),
  then GitHub's workflow-command escaping.
- ``xml`` / ``html``: ``terminal`` for every character XML 1.0 forbids or a CI page would render (the
  serializer escapes ``<&>"``; ``html`` escapes them itself), line breaks kept.
- ``plot_text``: ``terminal``, and ``$`` escaped (matplotlib's mathtext).
- ``redact``: ``scheme://user:password@host`` -> ``scheme://***@host`` (also used alone by JSON,
  which otherwise keeps its strings raw: it is data, and json escapes them correctly).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: userinfo of a URL: what precedes ``@`` after ``scheme://`` (RFC 3986: no ``/ ? # @`` in it)
_CREDENTIALS = re.compile(r"\b([A-Za-z][A-Za-z0-9+.\-]*://)[^\s/?#@]+@")
#: C0 controls, DEL, C1 controls, zero-width and bidirectional format characters, line/paragraph separators
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Markdown's inline-active ASCII punctuation: raw HTML (< >), entities (& before ``name;``), links
#: and images ([ ]), emphasis (* ~, _ not inside a word), code spans (`), tables (|), the escape (\)
_MD_ACTIVE = re.compile(r"[\\`*\[\]<>|~]|&(?=#?[A-Za-z0-9]+;)|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def redact(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``."""
    return _CREDENTIALS.sub(r"\1***@", text)


def _escape_control(m: re.Match[str]) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def terminal(text: str, *, keep: str = "") -> str:
    """``text`` safe on a terminal: control and format characters shown escaped (except those in
    ``keep``), URL credentials redacted."""
    if keep:
        return "".join(
            part if part in keep else _CONTROL.sub(_escape_control, part)
            for part in re.split(f"([{re.escape(keep)}])", redact(text))
        )
    return _CONTROL.sub(_escape_control, redact(text))


def _md_plain(text: str) -> str:
    return _MD_ACTIVE.sub(lambda m: "\\" + m.group(), text)


def markdown(text: str) -> str:
    """``text`` inert in GitHub-flavoured Markdown (also inside a table cell).

    Balanced code spans are kept (their content is literal in Markdown, only ``|`` is escaped
    there for tables); an unbalanced backtick is escaped with everything else.
    """
    parts = terminal(text).split("`")
    if len(parts) % 2 == 0:
        return _md_plain("`".join(parts))
    return "`".join(_md_plain(p) if i % 2 == 0 else p.replace("|", "\\|") for i, p in enumerate(parts))


def code_span(text: str) -> str:
    """``text`` as one inline code span (a fence longer than any backtick run inside it)."""
    text = terminal(text)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def workflow_data(text: str) -> str:
    """A workflow-command message (GitHub: ``%``, CR and LF escaped, after ``terminal``)."""
    return terminal(text, keep="\r\n").replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text: str) -> str:
    """A workflow-command property value: as data, plus ``:`` and ``,`` (so ``::`` cannot end it)."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def xml(text: str) -> str:
    """Text for an XML 1.0 document: forbidden and terminal-active characters shown escaped, line
    breaks and tabs kept (the serializer escapes ``< & > "`` itself)."""
    return terminal(text, keep="\n\t")


def html(text: str) -> str:
    """Text for HTML (and SVG) content and quoted attributes: ``xml``, then ``< & > " '`` as entities."""
    import html as _html  # here: the text and JSON reports need no html module (~1 ms of a start)

    return _html.escape(xml(text))


def plot_text(text: str) -> str:
    """Text for a matplotlib title or label: ``terminal`` (no glyph-less control characters), and
    ``$`` escaped, so a name like ``a$\\frac{$.log`` is not parsed as mathtext (which raised)."""
    return terminal(text).replace("$", r"\$")


def clean(value: T, fn: Callable[[str], str]) -> T:
    """``value`` with ``fn`` applied to every string in it: strings, tuples, lists, dict values and
    dataclasses (the rows a renderer builds, a JSON document), rebuilt; other values unchanged."""
    return _clean(value, fn)


def _clean(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(_clean(v, fn) for v in value)
    if isinstance(value, list):
        return [_clean(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v, fn) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _clean(getattr(value, f.name), fn) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    return value
