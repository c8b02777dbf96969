"""The null of divergence.py's end rise: how high healthy real runs end above their best level.

A log that ends a few rows into a blow-up is too short for divergence's sustained stretch
(``min_rows``). Statistic: the rows at the log's end that DivergenceDetector.rows_up marks (above
``factor`` x the best smoothed level so far and beyond the noise band), and the smoothed level of the
last row over that best. Healthy logs: short_jump_null.healthy_logs (the dev blind, public and
../shared/reallogs logs answered or expected ok), every run of each; each run read whole and cut at
every 5% of its rows from 10% on (a log may end anywhere: a job killed, a log copied mid-run).

Run:

    PYTHONPATH=$PWD python bench/end_rise_null.py
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.short_jump_null import healthy_logs  # noqa: E402
from logdoctor import pipeline  # noqa: E402
from logdoctor.detectors import robust  # noqa: E402
from logdoctor.detectors.divergence import DivergenceDetector  # noqa: E402
from logdoctor.errors import LogdoctorError  # noqa: E402
from logdoctor.model import LOSS  # noqa: E402


def end_rise(s: robust.Series) -> tuple[int, float]:
    """(rows marked up at the end, last smoothed level over the best before them)."""
    _w, sm, best, _wander, up = DivergenceDetector().rows_up(s)
    k = int(np.argmin(up[::-1])) if not up.all() else up.size
    return k, float(sm[-1] / best[-1 - k]) if best[-1 - k] > 0 and k < up.size else 0.0


def main() -> None:
    """Print the runs and cuts that end with rows up, highest ratio first."""
    hits, cuts, runs = [], 0, 0
    for path in healthy_logs():
        try:
            run = pipeline.load(str(path))
        except LogdoctorError:
            continue
        for part in (run, *run.earlier):
            s = robust.series(part, LOSS)
            runs += s.n >= 4
            for frac in [*np.arange(0.10, 1.0, 0.05), 1.0]:
                n = round(s.n * float(frac))
                if n < 4:
                    continue
                cuts += 1
                k, ratio = end_rise(dataclasses.replace(s, steps=s.steps[:n], values=s.values[:n], lines=s.lines[:n]))
                if k:
                    hits.append((ratio, k, n, round(float(frac), 2), path.name))
    hits.sort(reverse=True)
    print(f"{cuts} cuts of {runs} healthy runs; {len(hits)} end with rows up (ratio, rows up, rows, cut, log):")
    for h in hits[:15]:
        print(f"  {h[0]:.2f}  {h[1]}  {h[2]}  {h[3]}  {h[4]}")


if __name__ == "__main__":
    main()
