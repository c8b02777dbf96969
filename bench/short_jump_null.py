"""The nulls of three loss rules on healthy real runs (shortjump.py, nanprecursor.py, constantloss.py's parts).

Healthy logs: the dev blind rows with expected_health ok, the public rows with expected_health ok
and the ../shared/reallogs logs answered ok in tests/answers.tsv; every run of each (appended runs apart).

- short jump (shortjump.MIN_RISE): each run with a positive loss, its first 3-7 rows read at row
  strides 1, 2, 5, 10, 20, 50 and 100: the largest rise of a row above the lowest loss before it,
  over the first loss.
- precursor (nanprecursor.MIN_RATIO): the loss and each loss part, rows from 3 on at strides 1 and
  10: how many rows reach 1.25x the highest earlier value of their column.
- frozen part (constantloss.PART_QUANTUM): each loss part, the smallest relative range over any 8 rows.

Run:

    PYTHONPATH=$PWD python bench/short_jump_null.py
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.blind.corpus import cache_dir  # noqa: E402
from bench.blind.corpus import rows as blind_rows  # noqa: E402
from logdoctor import pipeline  # noqa: E402
from logdoctor.detectors.nanprecursor import MIN_RATIO  # noqa: E402
from logdoctor.detectors.nonfinite import other_objectives  # noqa: E402
from logdoctor.errors import LogdoctorError  # noqa: E402
from logdoctor.model import LOSS  # noqa: E402

STRIDES = (1, 2, 5, 10, 20, 50, 100)
REALLOGS = ROOT.parent / "shared" / "reallogs"
PUBLIC = Path.home() / ".cache" / "logdoctor" / "public_logs"


def healthy_logs() -> list[Path]:
    """The healthy logs named in the module docstring that are on this machine."""
    out = [cache_dir() / r["name"] for r in blind_rows() if r["split"] == "dev" and r["expected_health"] == "ok"]
    with open(ROOT / "bench" / "realruns" / "public_manifest.tsv", newline="") as fh:
        out += [PUBLIC / r["name"] for r in csv.DictReader(fh, delimiter="\t") if r.get("expected_health") == "ok"]
    for line in (ROOT / "tests" / "answers.tsv").read_text().splitlines():
        parts = line.split("\t")
        if len(parts) > 2 and parts[0].startswith("reallogs/") and parts[2] == "ok":
            out.append(REALLOGS / parts[0].removeprefix("reallogs/"))
    return [p for p in out if p.is_file()]


def first_rows_rise(x: np.ndarray) -> tuple[float, int, list[float]]:
    """The largest rise over the first loss in the first 7 rows at any stride: (rise, stride, rows)."""
    best: tuple[float, int, list[float]] = (0.0, 0, [])
    for stride in STRIDES:
        w = x[::stride][:7]
        if w.size < 3:
            continue
        rise = (w[1:] - np.minimum.accumulate(w)[:-1]) / w[0]
        if float(rise.max()) > best[0]:
            best = (float(rise.max()), stride, [round(float(v), 4) for v in w])
    return best


def _finite(run: object, col: str) -> np.ndarray:
    x = run.table[col].cast(float).fill_null(np.nan).to_numpy()  # type: ignore[attr-defined]
    return x[np.isfinite(x)]


def new_highs(x: np.ndarray) -> tuple[int, list[tuple[float, int, int]]]:
    """(rows tested, [(ratio, stride, row)]): rows from 3 on at ``MIN_RATIO`` x their column's highest before."""
    tested, hits = 0, []
    for stride in (1, 10):
        y = x[::stride]
        if y.size < 4:
            continue
        r = y[1:] / np.maximum.accumulate(y)[:-1]
        tested += r.size - 2
        hits += [(float(r[i]), stride, i + 1) for i in range(2, r.size) if r[i] >= MIN_RATIO]
    return tested, hits


def smallest_range(v: np.ndarray, rows: int = 8) -> float:
    """The smallest (max - min) / |median| over any ``rows`` consecutive values."""
    out = np.inf
    for a in range(v.size - rows + 1):
        w = v[a : a + rows]
        level = float(np.median(w))
        if level:
            out = min(out, float(np.ptp(w)) / abs(level))
    return out


def main() -> None:
    """Print each null's extremes."""
    jumps, highs, ranges, tested = [], [], [], 0
    for path in healthy_logs():
        try:
            run = pipeline.load(str(path))
        except LogdoctorError:
            continue
        for part in (run, *run.earlier):
            x = _finite(part, LOSS)
            if x.size >= 3 and np.all(x > 0):
                jumps.append((*first_rows_rise(x), path.name))
            for col in [LOSS, *other_objectives(part)]:
                v = _finite(part, col)
                if v.size >= 4 and np.all(v > 0):
                    n, hits = new_highs(v)
                    tested += n
                    highs += [(*h, col, path.name) for h in hits]
                if col != LOSS and v.size >= 8:
                    ranges.append((smallest_range(v), col, path.name))
    jumps.sort(key=lambda t: -t[0])
    print(f"short jump: {len(jumps)} runs with a positive loss; largest rises over the first loss")
    for rise, stride, w, name in jumps[:5]:
        print(f"  {rise:.3f}  stride {stride}  {name}  {w}")
    print(f"precursor: {len(highs)} of {tested:,} rows at {MIN_RATIO}x their column's highest earlier value")
    for h in sorted(highs, reverse=True)[:5]:
        print(f"  {h}")
    ranges.sort()
    print(f"frozen part: {len(ranges)} loss parts; smallest relative range over 8 rows")
    for r in ranges[:3]:
        print(f"  {r[0]:.2e}  {r[1]}  {r[2]}")


if __name__ == "__main__":
    main()
