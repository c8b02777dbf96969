"""Finding ranges on charts, one rule for the HTML page and the figure: every range goes in the
timeline strip; a panel shades only the localized ones (a finding over the whole run is said once,
in the strip, not by shading every panel)."""

from __future__ import annotations

from logdoctor.model import Finding

#: A finding whose range covers at least this share of the run's steps is run-wide.
RUN_WIDE = 0.5


def finding_range(f: Finding) -> tuple[int, int] | None:
    """The steps a finding covers (inclusive), or None for one without steps."""
    if f.first_step is None:
        return None
    return int(f.first_step), int(f.last_step if f.last_step is not None else f.first_step)


def run_wide(first: int, last: int, run_first: float, run_last: float) -> bool:
    """The range covers (nearly) the whole run: the strip shows it, no panel shades it."""
    return last - first >= RUN_WIDE * max(1.0, run_last - run_first)
