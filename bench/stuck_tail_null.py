"""How flat healthy real runs end: why a loss stuck on a plateau above its achievable level gets no rule.

Statistic per run (40+ positive loss rows): over the last half of the rows, the relative change of
the loss between the medians of that half's first and last fifth, and how many-fold the loss fell
before it (median of the first tenth of all rows over the median of the last half's first fifth).
Healthy logs: bench/short_jump_null.healthy_logs; beside them the dev blind logs whose truth is
stuck_loss or no_learning, for comparison.

Measured 2026-12-07 (57 healthy runs): the dev blind Lightning PINN run stuck at 5.8 (its truth: a
bad minimum; sibling runs of the same setup reach 0.17) changes 4.4% over its last half after a
1.6-fold fall in its logged step rows (its per-epoch column: 5.84 -> 5.81, 0.5%), while healthy runs
end flatter: OLMo continued pretraining 0.4% (fall 1.0-fold), an MMDetection one-epoch run 0.6%, and
the healthy sibling PINN run of 10,000 epochs 0.8% after a 708-fold fall. Flatness, the fall before
it and the share of the run it lasts all put the stuck run inside the healthy null; only the level a
sibling run reached says it is stuck, and one log does not hold that. So no rule is added.

Run:

    PYTHONPATH=$PWD python bench/stuck_tail_null.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.blind.corpus import cache_dir  # noqa: E402
from bench.blind.corpus import rows as blind_rows  # noqa: E402
from bench.short_jump_null import healthy_logs  # noqa: E402
from logdoctor import pipeline  # noqa: E402
from logdoctor.errors import LogdoctorError  # noqa: E402
from logdoctor.model import LOSS  # noqa: E402


def tail_change(loss: np.ndarray) -> tuple[float, float]:
    """(relative change over the last half, fold of the fall before it)."""
    half = loss[loss.size // 2 :]
    q = max(3, half.size // 5)
    start = float(np.median(half[:q]))
    return float(np.median(half[-q:])) / start - 1.0, float(np.median(loss[: max(3, loss.size // 10)])) / start


def report(title: str, paths: list[Path]) -> None:
    """One line per run, flattest end first."""
    out = []
    for path in paths:
        try:
            run = pipeline.load(str(path))
        except LogdoctorError:
            continue
        loss = run.table[LOSS].cast(float).to_numpy()
        loss = loss[np.isfinite(loss)]
        if loss.size >= 40 and np.all(loss > 0):
            change, fold = tail_change(loss)
            out.append((abs(change), change, fold, loss.size, path.name))
    print(title)
    for _, change, fold, n, name in sorted(out):
        print(f"  last half {change:+8.2%}  fall before {fold:8.2f}x  rows {n:6d}  {name}")


def main() -> None:
    """Print the healthy runs, then the stuck ones."""
    report("healthy", healthy_logs())
    bad = ("stuck_loss", "no_learning")
    dev = [r for r in blind_rows() if r["split"] == "dev"]
    stuck = [cache_dir() / r["name"] for r in dev if any(b in r["failures"] for b in bad)]
    report("stuck_loss / no_learning (dev)", [p for p in stuck if p.is_file()])


if __name__ == "__main__":
    main()
