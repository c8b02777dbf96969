"""What the Python API returns: a Report (one run) and Reports (several inputs), as compareresult.py
a Comparison: thin faces over the frozen records of the analysis that render themselves with the CLI's
own renderers: ``to_json()`` is ``-f json``, ``summary()`` the text report, ``to_html()`` ``-f html``,
``figure()`` the ``-f png`` picture, and ``_repr_html_()`` the HTML report inline in a notebook."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast, overload

from logdoctor.errors import ConfigError

if TYPE_CHECKING:  # each renderer, polars and matplotlib load when a method needs them
    import polars as pl
    from matplotlib.figure import Figure

    from logdoctor import model
    from logdoctor.samplerfacts import SamplerProfile

Status = Literal["ok", "warning", "error"]


def shown(fig: Figure) -> Figure:
    """``fig``, displayable as an image in a Jupyter kernel: a Figure made without pyplot shows as
    text there until the kernel's inline backend has registered its image formats, which importing
    it does (as ``import matplotlib.pyplot`` would; with another backend it registers nothing)."""
    if "ipykernel" in sys.modules:
        with contextlib.suppress(ImportError):
            import matplotlib_inline.backend_inline  # noqa: F401
    return fig


class Result:
    """What every result offers: its JSON document, text, Markdown and HTML reports, and its figure."""

    __slots__ = ()

    def to_json(self) -> str:
        """The JSON document, exactly as ``--format json`` writes it."""
        raise NotImplementedError

    def to_dict(self) -> Any:
        """``to_json()`` parsed: plain dicts, lists, strings and numbers (NaN as None)."""
        return json.loads(self.to_json())

    def summary(self, verbose: int = 0) -> str:
        """The text report, as the command writes it to a file (``verbose`` 1 or 2: ``-v``, ``-vv``)."""
        raise NotImplementedError

    def to_markdown(self) -> str:
        """The report as GitHub-flavoured Markdown (``--format markdown``)."""
        raise NotImplementedError

    def to_html(self) -> str:
        """The report as one self-contained HTML page (``--format html``): inline CSS and SVG, no script."""
        raise NotImplementedError

    def figure(self) -> Figure:
        """The diagnostic figure (``--format png``) as a matplotlib Figure, not shown by pyplot."""
        raise NotImplementedError

    def _repr_html_(self) -> str:
        """The HTML report inside a notebook: its CSS scoped to it, no script, nothing fetched."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.summary()


class Report(Result):
    """The diagnosis of one run: what ``logdoctor analyze`` reports, as typed attributes.

    Made by ``logdoctor.analyze`` (not constructed by hand); every attribute is a frozen record.
    """

    __slots__ = ("_report",)

    def __init__(self, report: model.Report) -> None:
        self._report = report

    @property
    def status(self) -> Status:
        """``ok``, ``warning`` or ``error``: the worst unexplained finding of every run in the log."""
        return cast(Status, self._report.status)

    @property
    def run_status(self) -> Status:
        """The last run's own status (equal to ``status`` for a log of one run)."""
        return cast(Status, self._report.run_status)

    @property
    def verdict(self) -> model.Verdict:
        """The batching verdict: ``batching`` (sorted, static, grouped, healthy, ...), confidence, cause."""
        return self._report.verdict

    @property
    def findings(self) -> tuple[model.Finding, ...]:
        """Every finding, worst first (symptoms the verdict explains included, marked in their evidence)."""
        return self._report.findings

    @property
    def problems(self) -> tuple[model.Finding, ...]:
        """The warnings and errors the verdict does not explain: what the headline lists."""
        return self._report.problems

    @property
    def structure(self) -> model.RunStructure:
        """Steps, stride, epochs, restarts and plan as the log states them (what is unknown is None)."""
        from logdoctor.model import RunStructure

        return self._report.meta.structure or RunStructure(rows=self._report.series.steps)

    @property
    def runs(self) -> tuple[model.RunPart, ...]:
        """One entry per fresh run appended to the log (the last is this report's); empty for one run."""
        return self._report.runs

    @property
    def sampler(self) -> SamplerProfile | None:
        """What a probe of the sampler adds (padding, tokens per batch, recurrence, the fix priced);
        None for a log."""
        return self._report.sampler

    @property
    def path(self) -> str:
        """The input as named (a path, or the name given to records in memory)."""
        return self._report.meta.path

    @property
    def table(self) -> pl.DataFrame:
        """The normalised step table analysed (``logdoctor parse``): one row per step."""
        return self._report.run.table

    def to_json(self) -> str:
        from logdoctor.renderers.jsonreport import JsonRenderer

        return JsonRenderer().render(self._report)

    def summary(self, verbose: int = 0) -> str:
        from logdoctor.renderers.console import ConsoleRenderer

        return ConsoleRenderer(verbosity=verbose, color=False).render(self._report)

    def to_markdown(self) -> str:
        from logdoctor.renderers.markdown import MarkdownRenderer

        return MarkdownRenderer().render(self._report)

    def to_html(self) -> str:
        from logdoctor.renderers.html import render_html

        return render_html(self._report)

    def figure(self) -> Figure:
        from logdoctor.renderers.plots import figure

        return shown(figure(self._report))

    def _repr_html_(self) -> str:
        from logdoctor.renderers.html import render_fragment

        return render_fragment(self._report)

    def __repr__(self) -> str:
        from logdoctor.renderers.console import ConsoleRenderer

        return f"<logdoctor.Report {ConsoleRenderer(verbosity=-1, color=False).render(self._report).strip()}>"


class Reports(Result, Sequence[Report]):
    """The reports of several inputs (``analyze`` of a list of paths, a folder or a glob), in order;
    ``errors`` holds the inputs that could not be analysed, as the command prints them."""

    __slots__ = ("_outcomes", "_reports")

    def __init__(self, outcomes: Sequence[model.Outcome]) -> None:
        self._outcomes = tuple(outcomes)
        self._reports = tuple(Report(o.report) for o in outcomes if o.report is not None)

    @property
    def errors(self) -> dict[str, str]:
        """Input -> its one-line error, for each input that could not be analysed."""
        return {o.path: o.error or "" for o in self._outcomes if o.report is None}

    @property
    def status(self) -> Status:
        """The worst status of the reports (``ok`` when there is none)."""
        order: tuple[Status, ...] = ("ok", "warning", "error")
        return max((r.status for r in self._reports), key=order.index, default="ok")

    @overload
    def __getitem__(self, index: int) -> Report: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Report]: ...

    def __getitem__(self, index: int | slice) -> Report | Sequence[Report]:
        return self._reports[index]

    def __len__(self) -> int:
        return len(self._reports)

    def __iter__(self) -> Iterator[Report]:
        return iter(self._reports)

    def to_json(self) -> str:
        from logdoctor.renderers.jsonreport import JsonRenderer

        return JsonRenderer().render_outcomes(self._outcomes)

    def summary(self, verbose: int = 0, reports: bool = False) -> str:
        """The summary table of the runs (``reports``: each run's report above it, ``--reports``)."""
        from logdoctor.renderers.console import ConsoleRenderer

        return str(ConsoleRenderer(verbosity=verbose, color=False, per_run=reports).render_outcomes(self._outcomes))

    def to_markdown(self) -> str:
        from logdoctor.renderers.markdown import MarkdownRenderer

        return str(MarkdownRenderer().render_outcomes(self._outcomes))

    def to_html(self) -> str:
        from logdoctor.renderers.html import HtmlRenderer

        return str(HtmlRenderer().render_outcomes(self._outcomes))

    def figure(self) -> Figure:
        """The figure of the one run analysed; ConfigError for several (a plot shows one run)."""
        if len(self._reports) != 1:
            raise ConfigError(f"a plot shows one run, got {len(self._reports)}; plot each input on its own")
        return self._reports[0].figure()

    def _repr_html_(self) -> str:
        return "<hr>".join(r._repr_html_() for r in self._reports)

    def __repr__(self) -> str:
        return f"<logdoctor.Reports of {len(self._reports)} runs, {len(self.errors)} errors: {self.status}>"
