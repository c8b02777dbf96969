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


def finding_spans(f: Finding) -> tuple[tuple[int, int], ...]:
    """The stretches a finding covers: its separate ``spans`` (a divergence's diverged stretches)
    where it has them, else its one range; none for a finding without steps."""
    if f.spans:
        return tuple((int(a), int(b)) for a, b in f.spans)
    rng = finding_range(f)
    return () if rng is None else (rng,)


def run_wide(first: int, last: int, run_first: float, run_last: float) -> bool:
    """The range covers (nearly) the whole run: the strip shows it, no panel shades it."""
    return last - first >= RUN_WIDE * max(1.0, run_last - run_first)
