"""CPU cost of ``analyze --format json`` at this checkout against an earlier commit, in one run.

``python bench/cost_vs.py BASE [--steps 100000] [--repeat 2] [--only fairseq,marian]`` checks BASE out
into a temporary git worktree, writes (once, seeded: bench/shapes.py) one log per line shape, and
runs each log through both trees in fresh processes, interleaved (base, here, base, here...), so
that both see the same machine load. Each number is the best (least) CPU seconds, user+sys, of
``--repeat`` processes (bench/child.py --rusage). Prints a Markdown table and the ratio here / base.

The two trees share this checkout's virtual environment (the packages are the same; only
logdoctor's code differs: ``PYTHONPATH`` points each process at its tree).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

from shapes import SHAPES, data_path  # noqa: E402

EXAMPLE = ROOT / "fixtures" / "example.log"


def _cpu(tree: Path, log: Path) -> float:
    """CPU seconds (user+sys) of one fresh ``analyze --format json`` of ``log`` with ``tree``'s code."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(HERE / "child.py"), "--rusage", "--"]
    cmd += [sys.executable, "-m", "logdoctor", "analyze", "--format", "json", str(log)]
    out = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["cpu"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", help="the commit to compare against (e.g. the round's start)")
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated shapes (default: every shape)")
    args = ap.parse_args()
    shapes = [s for s in args.only.split(",") if s] or sorted(SHAPES)
    logs = [(s, data_path(s, args.steps)) for s in shapes] + [("fixtures/example.log", EXAMPLE)]
    with tempfile.TemporaryDirectory(prefix="logdoctor-cost-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), args.base], check=True)
        try:
            rows = []
            for name, log in logs:
                best = {"base": float("inf"), "here": float("inf")}
                for _ in range(args.repeat):
                    best["base"] = min(best["base"], _cpu(base, log))
                    best["here"] = min(best["here"], _cpu(ROOT, log))
                rows.append((name, best["base"], best["here"]))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    print(f"| log ({args.steps:,} steps) | {args.base} | {head.stdout.strip()} | ratio |")
    print("|---|---|---|---|")
    for name, b, h in rows:
        print(f"| {name} | {b:.2f} | {h:.2f} | {h / b:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
