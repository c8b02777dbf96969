"""The null behind shortjump.MIN_RISE: how far healthy runs' first rows rise above their lowest loss.

Healthy logs: the dev blind rows with expected_health ok, the public rows with expected_health ok
and the ../shared/reallogs logs answered ok in tests/answers.tsv. For every run of each (appended
runs apart) with a positive loss, its first 3-7 rows read at row strides 1, 2, 5, 10, 20, 50 and 100:
the largest rise of a row above the lowest loss before it, over the first loss. Run:

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


def main() -> None:
    """Print the runs' largest rises, highest first."""
    found = []
    for path in healthy_logs():
        try:
            run = pipeline.load(str(path))
        except LogdoctorError:
            continue
        for part in (run, *run.earlier):
            x = part.table[LOSS].cast(float).fill_null(np.nan).to_numpy()
            x = x[np.isfinite(x)]
            if x.size >= 3 and np.all(x > 0):
                found.append((*first_rows_rise(x), path.name))
    found.sort(key=lambda t: -t[0])
    print(f"{len(found)} runs with a positive loss")
    for rise, stride, w, name in found[:10]:
        print(f"{rise:.3f}  stride {stride}  {name}  {w}")


if __name__ == "__main__":
    main()
