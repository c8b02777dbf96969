"""What ``logdoctor.compare`` returns: a Comparison, rendered as ``logdoctor compare`` renders it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from logdoctor.results import Report, Result, shown

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from logdoctor.comparison import result


class Comparison(Result):
    """A baseline against one or more candidates: did the fix work, and what did it cost
    (``logdoctor compare``). Made by ``logdoctor.compare``."""

    __slots__ = ("_comparison",)

    def __init__(self, comparison: result.Comparison) -> None:
        self._comparison = comparison

    @property
    def baseline(self) -> Report:
        """The baseline run's report."""
        return Report(self._comparison.baseline)

    @property
    def candidates(self) -> tuple[Report, ...]:
        """Each candidate's report, in order."""
        return tuple(Report(v.candidate) for v in self._comparison.versus)

    @property
    def outcomes(self) -> tuple[Literal["worked", "mixed", "regressed", "unchanged"], ...]:
        """Per candidate: ``worked``, ``mixed``, ``regressed`` or ``unchanged``."""
        return tuple(v.outcome for v in self._comparison.versus)

    @property
    def regressed(self) -> bool:
        """A candidate has new warnings or errors, or a worse loss at matched tokens (``--fail-on-regression``)."""
        return self._comparison.regressed

    def to_json(self) -> str:
        from logdoctor.comparison.jsondoc import render_json

        return render_json(self._comparison)

    def summary(self, verbose: int = 0) -> str:
        from logdoctor.comparison.views import render_text

        return render_text(self._comparison)

    def to_markdown(self) -> str:
        from logdoctor.comparison.views import render_markdown

        return render_markdown(self._comparison)

    def to_html(self) -> str:
        from logdoctor.comparison.views import render_html

        return render_html(self._comparison)

    def figure(self) -> Figure:
        from logdoctor.comparison.plot import figure

        return shown(figure(self._comparison))

    def _repr_html_(self) -> str:
        from logdoctor.comparison.views import html_fragment

        return html_fragment(self._comparison)

    def __repr__(self) -> str:
        return f"<logdoctor.Comparison {', '.join(self.outcomes)}>"
