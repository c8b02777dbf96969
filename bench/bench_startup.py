"""Issue 17, target (a): ``analyze`` of an everyday log (<= 10k steps) within 2.5x the bare import.

Usage (from the repository root): ``python bench/bench_startup.py [--repeat 5]``; prints one JSON
document. Each command runs in a fresh process through bench/child.py (``--rusage``: its own wall,
CPU and peak RSS); the best wall of ``--repeat`` runs is kept, and every ratio divides by the bare
``python -c "import polars, numpy, rich"`` measured in the same run. Inputs: fixtures/example.log
(590 steps, batch statistics), a seeded 10k-step loss-only log and the 10k canonical log with batch
statistics (both written once to bench/data/, git-ignored). A first warm-up run writes logdoctor's
bytecode (as an installed package has it) even when PYTHONDONTWRITEBYTECODE is set. On a shared
machine compare the CPU ratios; the wall ratios are the target on a quiet one.
``measure(repeat)`` returns the same document for bench/run.py. ``parsers`` compares the two command
lines of a small-log ``analyze``: clirun.fast (no typer import) and the typer app, the same work.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
CHILD = str(HERE / "child.py")
TARGET = 2.5
sys.path[:0] = [str(HERE)]

import best  # noqa: E402
from bench_ingest import write_log  # noqa: E402


def loss_only_log(path: Path, steps: int = 10_000) -> Path:
    """A seeded loss-only text log: a decaying loss with Gaussian noise, one line a step."""
    if not path.exists():
        rng = random.Random(5)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as fh:
            for s in range(1, steps + 1):
                fh.write(f"step {s} | loss={2 + 3 * math.exp(-s / 2000) + rng.gauss(0, 0.05):.4f}\n")
    return path


def inputs() -> dict[str, Path]:
    """The everyday logs of target (a), by label."""
    canonical = DATA / "canonical_10000.log"
    if not canonical.exists():
        write_log(canonical, 10_000)
    return {
        "example.log (590 steps, batch stats)": ROOT / "fixtures" / "example.log",
        "10k loss-only": loss_only_log(DATA / "lossonly_10000.log"),
        "10k with batch stats": canonical,
    }


def best_of(cmd: list[str], repeat: int) -> dict[str, float]:
    """Best of ``repeat`` fresh runs of ``cmd`` in the repository (bench/best.py)."""
    return best.best_of(cmd, repeat, ROOT)


def parsers(repeat: int) -> dict[str, object]:
    """``analyze fixtures/example.log`` through clirun.fast and through the typer app (fast turned
    off), alternated run by run; the share of the typer path's best CPU that the fast path saves."""
    out = best.sink()
    argv = ["logdoctor", "analyze", str(ROOT / "fixtures" / "example.log"), "--format", "text", "-o", out]
    runs: dict[str, list[dict[str, float]]] = {"fast": [], "typer": []}
    for _ in range(repeat):
        for path in runs:
            off = "import logdoctor.clirun as c; c.fast = lambda argv: None; " if path == "typer" else ""
            code = f"import sys; sys.argv = {argv!r}; {off}from logdoctor.__main__ import main; sys.exit(main())"
            runs[path].append(best_of([sys.executable, "-c", code], 1))
    cpu = {k: min(r["cpu"] for r in v) for k, v in runs.items()}
    wall = {k: min(r["wall"] for r in v) for k, v in runs.items()}
    return {
        "best_cpu": {k: round(v, 3) for k, v in cpu.items()},
        "best_wall": {k: round(v, 3) for k, v in wall.items()},
        "fast_saves_cpu_share": round(1 - cpu["fast"] / cpu["typer"], 3),
    }


def measure(repeat: int = 5) -> dict[str, object]:
    """Bare import and ``analyze`` (text and json) of each everyday log; ratios to the bare import."""
    files = inputs()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "logdoctor", "analyze", str(files["10k loss-only"]), "-o", best.sink()],
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
    )  # warm-up: bytecode
    bare = best_of([sys.executable, "-c", "import polars, numpy, rich"], repeat)
    rows = []
    for label, path in files.items():
        for fmt in ("text", "json"):
            cmd = [sys.executable, "-m", "logdoctor", "analyze", str(path), "--format", fmt, "-o", best.sink()]
            r = best_of(cmd, repeat)
            rows.append(
                {
                    "input": label,
                    "format": fmt,
                    "wall": round(r["wall"], 3),
                    "cpu": round(r["cpu"], 3),
                    "rss_mb": round(r["rss_mb"]),
                    "ratio_wall": round(r["wall"] / bare["wall"], 2),
                    "ratio_cpu": round(r["cpu"] / bare["cpu"], 2),
                }
            )
    worst_wall = max(float(r["ratio_wall"]) for r in rows)  # type: ignore[arg-type]
    worst_cpu = max(float(r["ratio_cpu"]) for r in rows)  # type: ignore[arg-type]
    return {
        "target": f"analyze of a log of <= 10k steps <= {TARGET}x the bare import of polars + numpy + rich",
        "bare_import": {"wall": round(bare["wall"], 3), "cpu": round(bare["cpu"], 3)},
        "rows": rows,
        "worst_ratio_wall": worst_wall,
        "worst_ratio_cpu": worst_cpu,
        "met_wall": worst_wall <= TARGET,
        "parsers": parsers(repeat),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="fresh runs of each command; the best wall is kept")
    print(json.dumps(measure(ap.parse_args().repeat), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
