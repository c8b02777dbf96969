"""HF megabatch windows from batch statistics: the window HF's formula gives this run, tested by sign counts.

HF ``group_by_length`` cuts each epoch, from its first step, into megabatches of
``mega_batch_mult = min(samples // (4 × batch), 50)`` optimizer steps (``batch`` = per-device batch ×
gradient accumulation) and sorts each one by length, longest first. Inside a window the batch length
then moves one way from step to step, and it jumps back where the next window starts. That shows
even when the lag-1 correlation over the whole run is weak (windows of 3-12 steps reset too often
for it to reach 0.5).

The test, for each candidate window (HF's size for the samples and batch the log shows, and the
spacing of the observed resets), with windows anchored at each epoch's first step:

- *within*: of the changes between consecutive logged rows inside one window, how many go the
  dominant way. Null: batches in a random order (a shuffled or bucketed pipeline), where each change
  goes either way with probability 1/2. The count of descents of a random permutation has variance
  (n+1)/12, below the binomial's (n-1)/4, so the binomial tail is conservative.
- *boundaries*: the changes from one window into the next must mostly jump back (a whole-epoch sort
  moves on the same way there; it is the sorted verdict's case).

Both shares must also reach the sorted rule's ``min_monotone`` (an effect size, not only a p-value).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from logdoctor.diagnosis.epochs import Epochs
from logdoctor.diagnosis.megabatch import HF_MEGABATCH
from logdoctor.stats.distributions import binom_sf

#: Per candidate and direction (at most 2 × 2 tests): family-wise at most 4e-4, below LD201's 1e-3.
ALPHA = 1e-4
#: Within-window changes needed before a window size is judged at all.
MIN_PAIRS = 8


@dataclass(frozen=True, slots=True)
class Windows:
    """Sorted windows found in the batch statistics.

    Attributes:
        steps: window length in optimizer steps.
        hf_mult: HF's ``mega_batch_mult`` for the samples and batch the log shows (None: unknown).
        samples: samples per epoch the log shows (sum of ``n_seq``), None when not logged.
        batch: samples per optimizer step (``n_seq``), None when not logged.
        within, along: changes inside a window, and how many go the dominant way.
        p_within: binomial p of ``along`` under a random order.
        bounds, back: changes into the next window, and how many jump back.
        direction: "descending" or "ascending".
    """

    steps: int
    hf_mult: int | None
    samples: int | None
    batch: int | None
    within: int
    along: int
    p_within: float
    bounds: int
    back: int
    direction: str

    @property
    def is_hf(self) -> bool:
        """The window is the size HF's formula gives this run."""
        return self.hf_mult is not None and self.steps == self.hf_mult

    def found(self, min_share: float) -> bool:
        """Sorted windows beyond chance, jumping back at most window boundaries.

        ``min_share`` (the sorted rule's ``min_monotone``): least share of within-window changes
        going one way, and of window starts jumping back. A random order gives 1/2; on ~10^5
        changes a shuffle whose batch lengths are slightly anticorrelated (token budgets) reaches
        p < 1e-4 at 51%, so significance alone is not enough; HF's windows give 100% (real runs,
        fixtures/realruns).
        """
        return (
            self.p_within < ALPHA
            and self.along >= min_share * self.within
            and self.bounds > 0
            and self.back >= min_share * self.bounds
        )


def hf_mult(samples: int, batch: int) -> int:
    """HF's ``mega_batch_mult`` (``get_length_grouped_indices``): megabatch size in optimizer steps."""
    return max(1, min(samples // (4 * batch), HF_MEGABATCH)) if batch > 0 else 1


def sizes(steps: np.ndarray, seqs: np.ndarray | None, epochs: Epochs) -> tuple[int | None, int | None]:
    """(samples per epoch, samples per optimizer step) from ``n_seq``: the median per-step count,
    and the largest total over an epoch's rows (the first and the last epoch may be partial)."""
    if seqs is None or steps.size < 2:
        return None, None
    span = np.diff(steps, prepend=steps[0] - max(1, int(np.median(np.diff(steps)))))
    ok = np.isfinite(seqs) & (span > 0)
    if not ok.any():
        return None, None
    batch = round(float(np.median(seqs[ok] / span[ok])))
    totals = np.bincount(epochs.index[ok], weights=seqs[ok])
    return (int(totals.max()) if totals.size else None), (batch or None)


def _positions(steps: np.ndarray, epochs: Epochs) -> tuple[np.ndarray, np.ndarray] | None:
    """(first, last) optimizer-step position inside its epoch of every row (0-based), or None."""
    spe = epochs.steps_per_epoch
    if not spe or steps.size < 2:
        return None
    k = max(1, int(np.median(np.diff(steps))))
    origin = epochs.starts[0] - k + 1  # the first row covers the k steps up to it
    first_step = np.r_[steps[0] - k + 1, steps[:-1] + 1]
    begin = origin + epochs.index.astype(np.int64) * spe
    return first_step - begin, steps - begin


def signs(
    steps: np.ndarray, x: np.ndarray, epochs: Epochs, m: int, hf: int | None, size: tuple[int | None, int | None]
) -> Windows | None:
    """The sign counts for windows of ``m`` steps (None when too few changes fall inside one)."""
    pos = _positions(steps, epochs)
    spe = epochs.steps_per_epoch
    if pos is None or not spe or m < 2:
        return None
    lo, hi = pos
    inside = (lo >= 0) & (hi < spe) & np.isfinite(x)
    win = np.where(inside & (lo // m == hi // m), hi // m, -1)
    same_epoch = epochs.index[1:] == epochs.index[:-1]
    ok = same_epoch & (win[1:] >= 0) & (win[:-1] >= 0)
    d = np.diff(x)
    within = ok & (win[1:] == win[:-1]) & (d != 0)
    bound = ok & (win[1:] == win[:-1] + 1) & (d != 0)
    n = int(within.sum())
    if n < MIN_PAIRS:
        return None
    down = int((d[within] < 0).sum())
    descending = 2 * down >= n
    along = down if descending else n - down
    back = int((d[bound] > 0).sum()) if descending else int((d[bound] < 0).sum())
    return Windows(
        m,
        hf,
        size[0],
        size[1],
        n,
        along,
        binom_sf(along - 1, n, 0.5),
        int(bound.sum()),
        back,
        "descending" if descending else "ascending",
    )


def candidates(hf: int | None, spacing: float | None, spe: int) -> list[int]:
    """HF's window for this run, then the observed reset spacing; none as long as an epoch."""
    out: list[int] = []
    for m in (hf, None if spacing is None else round(spacing)):
        if m is not None and 2 <= m <= 0.9 * spe and m not in out:
            out.append(m)
    return out


@dataclass(frozen=True, slots=True)
class Search:
    """What the window test saw: the windows found (or None), and HF's window for this run
    (``hf_steps``) when its size is known and shorter than an epoch, with whether the logged rows
    could resolve it (``hf_tested``)."""

    found: Windows | None
    hf_steps: int | None
    hf_tested: bool
    stride: int


def find(
    steps: np.ndarray,
    x: np.ndarray,
    seqs: np.ndarray | None,
    epochs: Epochs | None,
    spacing: float | None,
    min_share: float,
) -> Search:
    """Test HF's window for this run's sizes and the observed reset spacing (``min_share``: see
    ``Windows.found``)."""
    if epochs is None or not epochs.steps_per_epoch or steps.size < 2:
        return Search(None, None, False, 1)
    spe = epochs.steps_per_epoch
    size = sizes(steps, seqs, epochs)
    samples, batch = size
    hf = hf_mult(samples, batch) if samples and batch else None
    tried = [t for m in candidates(hf, spacing, spe) if (t := signs(steps, x, epochs, m, hf, size)) is not None]
    stride = max(1, int(np.median(np.diff(steps))))
    return Search(
        next((t for t in tried if t.found(min_share)), None),
        hf if hf and 2 <= hf <= 0.9 * spe else None,
        any(t.is_hf for t in tried),
        stride,
    )
