"""The batching verdict's thresholds: one object, built from the ``[batching]`` configuration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from logdoctor.diagnosis.lengthstats import OrderStats
    from logdoctor.diagnosis.recurrence import Recurrence

#: A loss period within this share of the epoch's length is the epoch's own (a sawtooth), not
#: another cycle (epochs jitter by about 5% under token-budget batching).
EPOCH_PERIOD_TOLERANCE = 0.1


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Every configurable threshold of the batching verdict, read by every rule that needs one.

    Attributes:
        min_lag1: least lag-1 rank autocorrelation of batch length for sorted order.
        min_monotone: least share of step-to-step length changes in one direction for sorted order.
        min_excess: least recurrence excess over chance (share of the static expectation) for
            static; below it the batches are recomposed.
        max_p: largest p-value of the recurrences for static.
        min_spread: least relative IQR of batch length for its order to be informative.
    """

    min_lag1: float
    min_monotone: float
    min_excess: float
    max_p: float
    min_spread: float

    def ordered(self, o: OrderStats) -> bool:
        """Batch length is autocorrelated and mostly moves one way (the sorted rule's order test)."""
        return o.lag1 >= self.min_lag1 and o.monotone_frac >= self.min_monotone

    def order_margin(self, o: OrderStats) -> float:
        """The sorted (or grouped-from-statistics) decision's margin, for ``verdicts.confidence``."""
        return 1.5 + 3 * min((o.lag1 - self.min_lag1) / 0.5, (o.monotone_frac - self.min_monotone) / 0.3)

    def static(self, r: Recurrence | None) -> bool:
        """Batches recur across epochs far beyond chance: static composition."""
        return r is not None and r.decidable and r.excess >= self.min_excess and r.p_value < self.max_p

    def recomposed(self, r: Recurrence | None) -> bool:
        """The recurrence test could decide, and the batches recur too little to be static."""
        return r is not None and r.decidable and r.excess < self.min_excess


#: The defaults (``BatchingDiagnosis``'s keyword defaults, and what ``[batching]`` overrides).
DEFAULT = Thresholds(min_lag1=0.5, min_monotone=0.7, min_excess=0.5, max_p=1e-6, min_spread=0.05)
