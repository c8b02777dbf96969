"""The registry of renderers, keyed by ``--format`` name; each module is imported when its format is used."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from logdoctor.errors import ConfigError
from logdoctor.renderers.base import Renderer

#: ``--format`` name -> (module under logdoctor.renderers, class): a text report imports no plot,
#: HTML or JUnit code (matplotlib's helpers, the SVG charts), which a small log's start-up would pay
_WHERE: dict[str, tuple[str, str]] = {
    "text": ("console", "ConsoleRenderer"),
    "json": ("jsonreport", "JsonRenderer"),
    "markdown": ("markdown", "MarkdownRenderer"),
    "github": ("github", "GithubRenderer"),
    "junit": ("junit", "JunitRenderer"),
    "png": ("plots", "PlotRenderer"),
    "svg": ("plots", "SvgPlotRenderer"),
    "pdf": ("plots", "PdfPlotRenderer"),
    "html": ("html", "HtmlRenderer"),
}


class _Registry(Mapping[str, type[Renderer]]):
    """A read-only mapping that imports a renderer's module on first look-up."""

    def __getitem__(self, name: str) -> type[Renderer]:
        module, cls = _WHERE[name]
        found: type[Renderer] = getattr(importlib.import_module(f"{__name__}.{module}"), cls)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)


RENDERERS: Mapping[str, type[Renderer]] = _Registry()


def get_renderer(name: str) -> type[Renderer]:
    """The renderer class for a ``--format`` name; ConfigError lists the known ones."""
    try:
        return RENDERERS[name]
    except KeyError:
        raise ConfigError(f"unknown format {name!r} (known: {', '.join(RENDERERS)})") from None


__all__ = ["RENDERERS", "Renderer", "get_renderer"]
