"""The loss's answer to an lr change: did it diverge after a jump, did it fall at a drop?"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from logdoctor.detectors import robust
from logdoctor.detectors.lrevents import LrChange
from logdoctor.detectors.robust import Series
from logdoctor.model import LOSS, STEP, Run

#: Rows before an lr change that give the loss's earlier level.
BEFORE_ROWS = 20
#: Rows after an lr change searched for the loss's reaction.
AFTER_ROWS = 50
#: The loss "diverged" after a jump when it reached this multiple of its earlier level (or NaN).
DIVERGE_FACTOR = 1.5


@dataclass(frozen=True, slots=True)
class LossResponse:
    """How the loss moved in the ``AFTER_ROWS`` rows after an lr change."""

    before: float | None
    peak_ratio: float | None
    diverged_step: int | None
    lag: int | None
    nonfinite: bool
    last_step: int | None

    def clause(self) -> str:
        """``"; the loss rose above 1.5x its earlier level 1 step later, peaking at 15.9x"``, or what it did."""
        if self.diverged_step is None or self.lag is None:
            if self.peak_ratio is None:
                return ""
            return f"; the loss stayed within {self.peak_ratio:.2f}x its earlier level"
        when = "at the same step" if self.lag == 0 else f"{self.lag} step{'s' if self.lag != 1 else ''} later"
        how = "became NaN/inf" if self.nonfinite else f"rose above {DIVERGE_FACTOR:g}x its earlier level"
        peak = f", peaking at {self.peak_ratio:.1f}x" if self.peak_ratio else ""
        return f"; the loss {how} {when}{peak}"

    def evidence(self) -> dict[str, float | int | str | bool | None]:
        """The numbers behind the clause."""
        return {
            "loss_before": self.before,
            "loss_peak_ratio": None if self.peak_ratio is None else round(self.peak_ratio, 4),
            "loss_diverged_step": self.diverged_step,
            "loss_lag_steps": self.lag,
            "loss_nonfinite": self.nonfinite,
        }


def loss_response(run: Run, loss: Series, c: LrChange) -> LossResponse:
    """Compare the loss after ``c`` with its median over the rows just before it."""
    i = int(np.searchsorted(loss.steps, c.step))
    pre = loss.values[max(0, i - BEFORE_ROWS) : i]
    rows = run.table.drop_nulls(LOSS)  # a row without a loss value is no NaN/inf loss (issue 28)
    steps = rows[STEP].to_numpy()
    raw = rows[LOSS].to_numpy().astype(np.float64)
    j = int(np.searchsorted(steps, c.step))
    win_steps, win = steps[j : j + AFTER_ROWS], raw[j : j + AFTER_ROWS]
    if pre.size == 0 or win.size == 0:
        return LossResponse(None, None, None, None, False, None)
    before = float(np.median(pre))
    finite = win[np.isfinite(win)]
    peak = float(finite.max() / before) if finite.size and before > 0 else None
    bad = ~np.isfinite(win) | ((win >= DIVERGE_FACTOR * before) if before > 0 else np.zeros(win.size, bool))
    if not bad.any():
        return LossResponse(before, peak, None, None, False, int(win_steps[-1]))
    k = int(np.flatnonzero(bad)[0])
    step = int(win_steps[k])
    return LossResponse(before, peak, step, step - c.step, not np.isfinite(win[k]), int(win_steps[-1]))


@dataclass(frozen=True, slots=True)
class LevelFall:
    """The loss level around an lr drop: the phase before it and the stretch after."""

    before: float
    phase_start: float
    after: float
    later_min: float
    phase_rows: int
    phase_first_step: int
    #: the rows whose median is ``before``: the last of the phase (steps ``before_steps``)
    before_rows: int = 0
    before_steps: tuple[int, int] = (0, 0)

    @property
    def fall(self) -> float:
        """Relative fall of the loss level across the drop (0.54 = fell 54%)."""
        return 1.0 - self.after / self.before

    @property
    def stalled(self) -> float:
        """End-of-phase level / start-of-phase level: about 1 when the loss made no progress."""
        return self.before / self.phase_start

    @property
    def far(self) -> float:
        """How far the phase's level sits above the lowest level the run reaches later."""
        return self.before / self.later_min

    def evidence(self) -> dict[str, float | int | str | bool | None]:
        """The numbers behind an "lr too high" finding."""
        return {
            "loss_before": round(self.before, 6),
            "loss_after": round(self.after, 6),
            "fall": round(self.fall, 4),
            "phase_start_level": round(self.phase_start, 6),
            "stalled_ratio": round(self.stalled, 4),
            "later_min": round(self.later_min, 6),
            "far_above_ratio": round(self.far, 4),
            "phase_rows": self.phase_rows,
            "phase_first_step": self.phase_first_step,
        }


def level_fall(loss: Series, c: LrChange, phase_start_step: int | None) -> LevelFall | None:
    """Loss levels around an lr drop at ``c`` (medians of thirds of the phase before it and of the
    rows after it); None when the loss is not positive or either side has too few rows."""
    if not loss.log_scale:
        return None
    i = int(np.searchsorted(loss.steps, c.step))
    lo = 0 if phase_start_step is None else int(np.searchsorted(loss.steps, phase_start_step))
    phase = loss.values[lo:i]
    if phase.size < 9 or loss.n - i < 6:
        return None
    third = max(3, min(AFTER_ROWS, phase.size // 3))
    after = loss.values[i : i + third]
    later = robust.rolling_median(loss.values[i:], 5)
    return LevelFall(
        before=float(np.median(phase[-third:])),
        phase_start=float(np.median(phase[:third])),
        after=float(np.median(after[after.size // 2 :])),
        later_min=float(later.min()),
        phase_rows=int(phase.size),
        phase_first_step=int(loss.steps[lo]),
        before_rows=third,
        before_steps=(int(loss.steps[i - third]), int(loss.steps[i - 1])),
    )
