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
- ``redact``: credentials shown as ``***``: URL userinfo (``scheme://***@host``), query parameters
  that carry credentials (``?token=***``, ``X-Amz-Signature=***``), secrets by their shape (AWS key
  ids, ``hf_``/``ghp_`` tokens, W&B keys) and every secret met in a URL before, wherever it is
  quoted again. Every sink applies it: ``terminal`` and all the sanitisers built on it, and alone
  where strings stay raw (JSON reports, tail's JSON lines, hook payloads, ``parse`` tables).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: userinfo of a URL: what precedes ``@`` after ``scheme://`` (RFC 3986: no ``/ ? # @`` in it; a
#: password pasted unencoded, as AWS secret keys with ``/`` are, is taken up to the ``@`` too)
_CREDENTIALS = re.compile(r"\b([A-Za-z][A-Za-z0-9+.\-]*://)([^\s/?#@:]+:[^\s?#@]+|[^\s/?#@]+)@")
#: C0 controls, DEL, C1 controls, zero-width and bidirectional format characters, line/paragraph
#: separators, and what no UTF-8 or XML 1.0 text may hold: lone surrogates (a file name's bytes that
#: are not UTF-8 arrive as U+DC80..U+DCFF) and the non-characters U+FFFE and U+FFFF
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ud800-\udfff\ufffe\uffff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Markdown's inline-active ASCII punctuation: raw HTML (< >), entities (& before ``name;``), links
#: and images ([ ]), emphasis (* ~, _ not inside a word), code spans (`), tables (|), the escape (\)
_MD_ACTIVE = re.compile(r"[\\`*\[\]<>|~]|&(?=#?[A-Za-z0-9]+;)|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


#: query parameters that carry a credential (case-insensitive): presigned URLs (``X-Amz-*``,
#: ``X-Goog-*``, Azure's ``sig``), tokens, keys, secrets and passwords; ``name=value`` after ``?``,
#: ``&`` or ``;``, the value up to the next separator
_QUERY = re.compile(
    r"(?i)([?&;](?:x-amz-[a-z0-9-]+|x-goog-[a-z0-9-]+|awsaccesskeyid|sig|signature|token|"
    r"[a-z0-9_.-]*(?:_token|_secret|_password|api_?key|access_?key|secret_?key)|key|secret|password|"
    r"passwd|pwd|auth|credential|client_secret)=)[^&;#\s\"'<>]+"
)
#: secrets by their shape, wherever they stand: AWS access key ids, Hugging Face, GitHub, Slack and
#: OpenAI-style tokens, W&B API keys (40 hex digits, also after ``local-``), bearer tokens
_SHAPES = re.compile(
    r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b|\bhf_[A-Za-z0-9]{30,}\b|\bgh[pousr]_[A-Za-z0-9]{36,}\b"
    r"|\bgithub_pat_[A-Za-z0-9_]{22,}\b|\bxox[abprs]-[A-Za-z0-9-]{10,}\b|\bsk-[A-Za-z0-9_-]{20,}\b"
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/-]{8,}=*"
)
#: cheap tests that a text may hold one of ``_SHAPES`` / a 40-hex-digit run (most hold neither)
_SHAPE_HINT = re.compile(r"A[KSB]IA|ACCA|hf_|gh[pousr]_|github_pat_|xox|sk-|(?i:bearer)")
_HEX_RUN = re.compile(r"[0-9a-f]{8}[0-9a-f]{32}")
#: a W&B API key: 40 lowercase hex digits (a SHA-1 has the same shape: data columns of hashes skip it)
_HEX40 = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{40}(?![0-9A-Za-z])")
#: a secret this short is not looked for elsewhere in a text (it would blank ordinary words)
MIN_SECRET = 8
#: the secrets met in a URL so far (bounded): a library's error may quote one without its URL
_KNOWN: dict[str, None] = {}
_KNOWN_MAX = 256


def _remember(secret: str) -> None:
    from urllib.parse import unquote

    for s in {secret, unquote(secret)}:
        if len(s) >= MIN_SECRET and s not in _KNOWN and len(_KNOWN) < _KNOWN_MAX:
            _KNOWN[s] = None


def _userinfo(m: re.Match[str]) -> str:
    for part in m.group(2).split(":"):
        _remember(part)
    return f"{m.group(1)}***@"


def _query(m: re.Match[str]) -> str:
    _remember(m.group()[len(m.group(1)) :])
    return f"{m.group(1)}***"


def redact(text: str, *, hashes: bool = True) -> str:
    """``text`` with every credential it shows replaced by ``***``: a URL's userinfo, the values of
    query parameters that carry credentials (``token``, ``sig``, ``X-Amz-Signature``...), secrets
    by their shape (AWS key ids, ``hf_``/``ghp_`` tokens, W&B keys), and any secret met in a URL
    before, wherever it is quoted again (a library's error that names the key without the URL).
    ``hashes=False`` leaves 40-hex-digit words (a column of SHA-1 batch fingerprints is data)."""
    if not text:
        return text
    if "://" in text:
        text = _CREDENTIALS.sub(_userinfo, text)
    if "=" in text:
        text = _QUERY.sub(_query, text)
    if _SHAPE_HINT.search(text):
        text = _SHAPES.sub("***", text)
    if hashes and _HEX_RUN.search(text):
        text = _HEX40.sub("***", text)
    for secret in _KNOWN:
        if secret in text:
            text = text.replace(secret, "***")
    return text


def learn(args: list[str]) -> None:
    """Remember the secrets that the command line's URLs carry (``redact`` of each), so that a
    later text quoting one without its URL (a library's error message) has it redacted too."""
    for arg in args:
        redact(arg)


def _escape_control(m: re.Match[str]) -> str:
    c = m.group()
    if 0xDC80 <= ord(c) <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape): shown as that byte
        return f"\\x{ord(c) - 0xDC00:02x}"
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
    if isinstance(value, dict):  # keys too: a column or metric name is the log's text
        return {(fn(k) if isinstance(k, str) else k): _clean(v, fn) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _clean(getattr(value, f.name), fn) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    return value
