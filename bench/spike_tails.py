"""Tail of the robust spike z on healthy real runs, against Student-t predictions (the spike null's df).

    python bench/spike_tails.py [../shared/reallogs]

Pools the one-sided robust z (logdoctor.detectors.spikefind.upward_z) of the loss and grad norm of
every real log whose MANIFEST records no known anomaly, and prints P(z > 5, 8, 12) beside what
Student-t noise with 3, 4, 5 and 8 degrees of freedom predicts.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from logdoctor import pipeline
from logdoctor.detectors import robust
from logdoctor.detectors.spikefind import upward_z


def main() -> None:
    """Print the pooled tail and the Student-t predictions."""
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "reallogs"
    with (root / "MANIFEST.tsv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    names = [r["file"] for r in rows if r["known_anomalies"].strip('"').lower().startswith(("none", "no loss"))]
    zs = []
    for name in names:
        run = pipeline.load(str(root / name))
        for col in ("loss", "grad_norm"):
            s = robust.series(run, col)
            if s.n >= 30:
                zs.append(upward_z(s, 31, 301)[0])
    z = np.concatenate(zs)
    tail = ", ".join(f"P(z>{k})={np.mean(z > k):.2e}" for k in (5, 8, 12))
    print(f"{len(names)} healthy logs, {z.size} rows: {tail}")
    for df in (3, 4, 5, 8):
        c = stats.t.ppf(0.75, df) * 1.4826
        print(f"Student-t({df}): " + ", ".join(f"P(z>{k})={stats.t.sf(k * c, df):.2e}" for k in (5, 8, 12)))


if __name__ == "__main__":
    main()
