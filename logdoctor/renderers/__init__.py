"""The registry of renderers, keyed by ``--format`` name."""

from __future__ import annotations

from logdoctor.errors import ConfigError
from logdoctor.renderers.base import Renderer
from logdoctor.renderers.console import ConsoleRenderer
from logdoctor.renderers.jsonreport import JsonRenderer

RENDERERS: dict[str, type[Renderer]] = {r.name: r for r in (ConsoleRenderer, JsonRenderer)}


def get_renderer(name: str) -> type[Renderer]:
    """The renderer class for a ``--format`` name; ConfigError lists the known ones."""
    try:
        return RENDERERS[name]
    except KeyError:
        raise ConfigError(f"unknown format {name!r} (known: {', '.join(RENDERERS)})") from None


__all__ = ["RENDERERS", "Renderer", "get_renderer"]
