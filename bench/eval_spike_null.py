"""The null of a short-run spike in the eval or training loss on healthy real runs: why no rule.

A loss spike that a per-epoch log shows only as a few epochs' excursion (the dev blind Keras fit
log of behavioral cloning: val_loss 0.026 -> 0.066 -> 0.022 over 8 epochs, 2.5x, the epoch-mean
training loss 1.3x with it) was to be a rule. Measured here, it is not one: the same statistic
(largest_excursion, below) on healthy runs reaches further on both curves, so any threshold that
finds that log also flags healthy ones (measured 2026-12-07):

- eval loss: healthy SpeechBrain EEGNet BNCI2014-001 valid_loss 0.39 -> 1.60 -> back over 8 evals
  (4.1x, z 16.0), healthy face-emotion val_loss 1.5x over 6 evals (z 9.5), Ultralytics z 14.0;
  the behavioral-cloning log 2.5x, z 8.6.
- training loss (runs of 8-600 rows): healthy runs up to z 35.9 (DeepSpeed random-LTD), 15.9,
  10.2, 8.9 (ratios up to 4.1x); the behavioral-cloning log 1.29x, z 5.2.
- both together: of the healthy runs with an eval excursion of 1.5x or more, the face-emotion log
  also shows its training loss 1.37x up in the same evals (its loss returns to its first value
  there: an unmarked relaunch?); two healthy episodes are too few to state a joint null by.

For each healthy log (bench/short_jump_null.healthy_logs: the dev blind rows with expected_health ok,
the public rows with expected_health ok, the ../shared/reallogs logs answered ok) with a validation
loss of at least evalspike.MIN_EVALS positive evaluations: the largest excursion of an eval above the
median of the evals before it, in log units over the series' noise (robust z), and as a ratio, among
the evals that the series came back from (a later eval at or below that median). The dev blind logs
whose truth holds a loss spike print the same, beside, for comparison (not to fit a threshold).

Run:

    PYTHONPATH=$PWD python bench/eval_spike_null.py
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.blind.corpus import cache_dir  # noqa: E402
from bench.blind.corpus import rows as blind_rows  # noqa: E402
from bench.short_jump_null import healthy_logs  # noqa: E402
from logdoctor import pipeline  # noqa: E402
from logdoctor.detectors.evalseries import EvalSeries, main_eval_loss  # noqa: E402
from logdoctor.detectors.overfitting import eval_noise  # noqa: E402
from logdoctor.errors import LogdoctorError  # noqa: E402
from logdoctor.model import LOSS, STEP, Run  # noqa: E402

#: Fewest positive evaluations a spike is judged on (a level of LEVEL_EVALS, a peak, a way back).
MIN_EVALS = 8
#: Evaluations whose median is a level; also the widest spike (a wider one is a stretch, LD410/LD412's).
LEVEL_EVALS = 5


@dataclass(frozen=True, slots=True)
class Excursion:
    """The largest rise of one evaluation above the level before it that the series came back from."""

    peak: int  # index of the highest eval of the excursion
    back: int  # index of the first later eval at or below the level (plus its noise)
    level: float  # the level before the rise (median of LEVEL_EVALS evals), in the series' units
    z: float  # log(peak / level) over the per-eval noise of log(values)
    ratio: float  # peak / level
    evals: int  # evaluations judged

    @property
    def width(self) -> int:
        """Evaluations from the peak to the first one back at the level, the peak included."""
        return self.back - self.peak


def largest_excursion(ev: EvalSeries) -> Excursion | None:
    """The eval that rose highest, in noise units, above the lowest of the medians of LEVEL_EVALS
    evaluations that end up to LEVEL_EVALS evaluations before it (the level before the climb, a
    climb being at most that wide), among the evals after which the series came back to within
    twice its noise of that level; None without MIN_EVALS positive evals or a noise to measure by.

    Everything is in log units (a spike is a ratio): the noise is the robust per-eval noise of
    ``log(values)`` (overfitting.eval_noise: the MAD of the successive differences over sqrt 2).
    """
    v = ev.values
    if v.size < MIN_EVALS or not np.all(v > 0):
        return None
    y = np.log(v)
    noise = eval_noise(y)
    if noise <= 0:
        return None
    best: Excursion | None = None
    for i in range(LEVEL_EVALS, y.size - 1):
        ends = range(max(LEVEL_EVALS, i - LEVEL_EVALS + 1), i + 1)
        level = min(float(np.median(y[e - LEVEL_EVALS : e])) for e in ends)
        back = np.flatnonzero(y[i + 1 :] <= level + 2 * noise)
        if back.size == 0:
            continue  # never came back: a rise (LD410/LD412), not a spike
        z = (float(y[i]) - level) / noise
        if best is None or z > best.z:
            best = Excursion(i, i + 1 + int(back[0]), float(np.exp(level)), z, float(np.exp(y[i] - level)), int(y.size))
    return best


def train_loss(run: Run) -> EvalSeries | None:
    """The training loss of a run of 8-600 finite rows as a series, else None."""
    s, v = run.table[STEP].cast(float).to_numpy(), run.table[LOSS].cast(float).to_numpy()
    ok = np.isfinite(v)
    return EvalSeries(LOSS, s[ok], v[ok]) if 8 <= int(ok.sum()) <= 600 else None


def report(title: str, paths: list[Path]) -> list[tuple[float, float, str]]:
    """One line per run and curve; returns (z, ratio, name) sorted by z, largest first."""
    out = []
    for path in paths:
        try:
            run = pipeline.load(str(path))
        except LogdoctorError:
            continue
        for ev in (main_eval_loss(run), train_loss(run)):
            exc = largest_excursion(ev) if ev is not None else None
            if ev is not None and exc is not None:
                out.append((exc.z, exc.ratio, f"{path.name} ({ev.name}, {exc.evals} points, {exc.width} wide)"))
    out.sort(reverse=True)
    print(title)
    for z, ratio, name in out:
        print(f"  z {z:6.2f}  ratio {ratio:5.2f}  {name}")
    return out


def main() -> None:
    """Print the healthy runs, then the spiking ones."""
    report("healthy", healthy_logs())
    spiky = [cache_dir() / r["name"] for r in blind_rows() if r["split"] == "dev" and "loss_spike" in r["failures"]]
    report("loss_spike (dev)", [p for p in spiky if p.is_file()])


if __name__ == "__main__":
    main()
