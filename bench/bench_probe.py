"""Time and peak memory of ``logdoctor probe`` on samplers over 1,000,000 samples, 3 epochs.

Run: ``python bench/bench_probe.py [--repeat N]``. Each probe is a fresh process (``bench/child.py
--rusage``: its wall, CPU and peak RSS); beside it, the floor: the same process probing 1,000 samples
(imports, torch, the analysis), and the user's own sampler iterated for 3 epochs with nothing else.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGETS = HERE / "probe_targets.py"
#: (target, extra arguments, what it is)
CASES = (
    ("random", (), "torch RandomSampler, batch 32"),
    ("static", (), "sort and batch once, batch order shuffled"),
    ("grouped", (), "HF LengthGroupedSampler, batch 32"),
    ("distributed", ("--world-size", "4"), "DistributedSampler, 4 ranks of batch 32"),
)


def measured(target: str, extra: tuple[str, ...], n: int | None = None) -> dict[str, float]:
    """One probe in a fresh process: wall, CPU and peak RSS, and its verdict."""
    out = HERE / f".probe-{target}.json"
    size = ("--arg", f"n={n}") if n else ()
    cmd = [
        sys.executable,
        "-m",
        "logdoctor",
        "probe",
        f"{TARGETS}:{target}",
        *size,
        *extra,
        "-f",
        "json",
        "-o",
        str(out),
        "--exit-zero",
    ]
    done = subprocess.run(
        [sys.executable, str(HERE / "child.py"), "--rusage", "--", *cmd],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE.parent,
    )
    stats = json.loads(done.stdout.strip().splitlines()[-1])
    doc = json.loads(out.read_text())
    out.unlink()
    stats["verdict"] = doc["verdict"]["batching"]
    stats["batches"] = doc["sampler"]["batches"]
    return stats


def bare_walk(target: str) -> float:
    """Seconds the user's own sampler takes to yield 3 epochs of index batches (nothing else)."""
    code = (
        f"import sys, time; sys.path.insert(0, {str(HERE)!r}); import probe_targets as t; "
        f"loader = t.{target}(); w = time.perf_counter(); "
        "[None for _ in range(3) for _ in loader.batch_sampler]; print(time.perf_counter() - w)"
    )
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def stages(target: str = "random") -> str:
    """In one process, imports excluded: the user's sampler alone, then each stage of a probe."""
    code = f"""
import sys, time
sys.path[:0] = [{str(HERE)!r}, {str(HERE.parent)!r}]
import probe_targets as t
from logdoctor import pipeline
from logdoctor.probing import lengths as L
from logdoctor.probing.feed import resolve
from logdoctor.probing.ranks import lanes
from logdoctor.probing.source import to_run
from logdoctor.probing.summary import with_profile
from logdoctor.probing.walk import Settings, Walker
pipeline.analyze(to_run(Walker(lanes(resolve([[0, 1]] * 40), 1), None, None, Settings(), None, False).run(), "warm"))
loader = t.{target}()
w = time.perf_counter()
feed = resolve(loader); ways = lanes(feed, 1); table = L.find(feed)
walker = Walker(ways, table, None, Settings(), feed.batch_size, feed.drop_last)
for e in range(3):
    walker._hooks(e); walker._epoch(e)
w1 = time.perf_counter(); walked = walker._finish(); w2 = time.perf_counter()
run = to_run(walked, "x"); report = pipeline.analyze(run); w3 = time.perf_counter()
with_profile(report, walked, feed, ways, table, Settings(), "x"); w4 = time.perf_counter()
print(f"read 3 epochs {{w1 - w:.2f}} s, records {{w2 - w1:.2f}} s, run + analysis {{w3 - w2:.2f}} s, "
      f"profile and price {{w4 - w3:.2f}} s")
"""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def main() -> int:
    """Measure every case (best of ``--repeat``) and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {Path('/proc/loadavg').read_text().split()[:3]}")
    floor = min((measured("random", (), 1000) for _ in range(args.repeat)), key=lambda s: s["wall"])
    print(f"floor (1,000 samples): {floor['wall']:.2f} s wall, {floor['cpu']:.2f} s CPU, {floor['rss_mb']:.0f} MB")
    print(
        "| sampler (1,000,000 samples, 3 epochs) | batches | verdict | wall s | CPU s | peak RSS MB | "
        "its own 3 epochs, bare |\n|---|---|---|---|---|---|---|"
    )
    for target, extra, what in CASES:
        best = min((measured(target, extra) for _ in range(args.repeat)), key=lambda s: s["wall"])
        bare = "" if extra else f"{bare_walk(target):.2f} s"
        print(
            f"| {what} | {best['batches']:,} | {best['verdict']} | {best['wall']:.2f} | {best['cpu']:.2f} | "
            f"{best['rss_mb']:.0f} | {bare} |",
            flush=True,
        )
    print(f"\nstages of the RandomSampler probe, in one process: {stages()}")
    print(f"load at the end {Path('/proc/loadavg').read_text().split()[:3]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
