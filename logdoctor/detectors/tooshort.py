"""One LD006 info per run naming the analyses its length does not support."""

from __future__ import annotations

from logdoctor import codes
from logdoctor.detectors import changepoints, drops, periodicity
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.model import Run

#: Analysis name -> fewest finite loss rows it needs (the detectors' own minimums).
MINIMUM_ROWS: dict[str, int] = {
    "periodicity": periodicity.MIN_POINTS,
    "changepoints": changepoints.MIN_POINTS,
    "trends": drops.MIN_POINTS,
}


class TooShortDetector(Analyzer):
    """Say once which analyses were skipped because the run is short."""

    name = "too-short"

    def analyze(self, run: Run) -> Detection:
        """LD006 listing skipped analyses, or nothing when the run is long enough for all."""
        n = run.n_steps
        skipped = sorted(name for name, need in MINIMUM_ROWS.items() if n < need)
        if not skipped:
            return Detection()
        need = max(MINIMUM_ROWS[s] for s in skipped)
        ev = {"n_steps": n, "skipped": ",".join(skipped), "rows_needed": need}
        return Detection(
            (
                codes.finding(
                    "LD006",
                    f"Only {n} step{'' if n == 1 else 's'} logged: skipped {', '.join(skipped)} "
                    f"(needs at least {need}).",
                    evidence=ev,
                ),
            )
        )
