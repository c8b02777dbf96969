"""The null of lossweights.NOISE_K: how far a healthy loss part's level moves between two adjacent windows.

Healthy logs: those of bench/short_jump_null.py (dev blind, public and ../shared/reallogs logs answered
ok); every run with at least two loss parts logged in the total's rows (lossweights.own_parts). For
each part, on log scale, at every row r: median of rows [r, r+10) minus median of rows [r-10, r),
over the part's step-to-step noise (MAD of first differences / sqrt 2). Prints the quantiles, the
share above 2 and 3, and the parts with the largest rise.

Run:

    PYTHONPATH=$PWD python bench/weights_null.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.short_jump_null import healthy_logs  # noqa: E402
from logdoctor import pipeline  # noqa: E402
from logdoctor.detectors import robust  # noqa: E402
from logdoctor.detectors.lossweights import own_parts  # noqa: E402
from logdoctor.errors import LogdoctorError  # noqa: E402

WINDOW = 10


def main() -> None:
    """Print the null's quantiles and its largest rises."""
    moves, top, runs, names = [], [], 0, set()
    for path in healthy_logs():
        try:
            run = pipeline.load(str(path))
        except LogdoctorError:
            continue
        for part in (run, *run.earlier):
            got = own_parts(part)
            if got is None or got.steps.size < 4 * WINDOW:
                continue
            runs += 1
            names.add(path.name)
            for col, v in got.parts.items():
                y = np.log(v) if np.all(v > 0) else v
                sigma = float(robust.diff_noise(y))
                if not sigma > 0:
                    continue
                m = np.array(
                    [
                        np.median(y[r : r + WINDOW]) - np.median(y[r - WINDOW : r])
                        for r in range(WINDOW, y.size - WINDOW + 1)
                    ]
                )
                moves.append(m / sigma)
                top.append((float(m.max() / sigma), col, path.name))
    a = np.concatenate(moves)
    q = np.quantile(a, [0.5, 0.9, 0.95, 0.975, 0.99])
    print(f"{len(top)} parts of {runs} runs, {a.size:,} windows: " + ", ".join(sorted(names)))
    print("quantiles 50/90/95/97.5/99%: " + " ".join(f"{x:.2f}" for x in q))
    print(f"share above 2: {(a > 2).mean():.3f}; above 3: {(a > 3).mean():.3f}")
    for t in sorted(top, reverse=True)[:5]:
        print(f"  {t[0]:.1f}  {t[1]}  {t[2]}")


if __name__ == "__main__":
    main()
