"""The registry of renderers, keyed by ``--format`` name."""

from __future__ import annotations

from logdoctor.errors import ConfigError
from logdoctor.renderers.base import Renderer
from logdoctor.renderers.console import ConsoleRenderer
from logdoctor.renderers.github import GithubRenderer
from logdoctor.renderers.html import HtmlRenderer
from logdoctor.renderers.jsonreport import JsonRenderer
from logdoctor.renderers.junit import JunitRenderer
from logdoctor.renderers.markdown import MarkdownRenderer
from logdoctor.renderers.plots import PdfPlotRenderer, PlotRenderer, SvgPlotRenderer

RENDERERS: dict[str, type[Renderer]] = {
    r.name: r
    for r in (
        ConsoleRenderer,
        JsonRenderer,
        MarkdownRenderer,
        GithubRenderer,
        JunitRenderer,
        PlotRenderer,
        SvgPlotRenderer,
        PdfPlotRenderer,
        HtmlRenderer,
    )
}


def get_renderer(name: str) -> type[Renderer]:
    """The renderer class for a ``--format`` name; ConfigError lists the known ones."""
    try:
        return RENDERERS[name]
    except KeyError:
        raise ConfigError(f"unknown format {name!r} (known: {', '.join(RENDERERS)})") from None


__all__ = ["RENDERERS", "Renderer", "get_renderer"]
