"""The ``formats`` listing: the parsers in sniffing order and the field-alias table."""

from __future__ import annotations

from logdoctor.ingest.aliases import ALIASES
from logdoctor.ingest.parsers import PARSERS


def formats_text() -> str:
    """The parsers in sniffing order with their descriptions, then the alias table."""
    width = max(len(p.name) for p in PARSERS)
    lines = ["Formats (detected from the content, tried in this order):"]
    lines += [f"  {p.name:<{width}}  {p.description}" for p in PARSERS]
    lines += [
        "",
        "Field aliases (canonical column: accepted spellings; override with --map col=key):",
    ]
    lines += [f"  {canon}: {', '.join(names)}" for canon, names in ALIASES.items()]
    return "\n".join(lines) + "\n"
