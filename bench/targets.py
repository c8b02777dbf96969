"""Issue 17's performance targets, each measured as a number or a ratio within one run.

Usage (from the repository root): ``python bench/targets.py [--repeat 3] [--only startup million sweep tail]
[--root DIR] [--json OUT]``. Prints one JSON document ``{"values": {...}, "details": {...}, ...}``;
bench/run.py calls :func:`measure_targets` and writes the "Targets" section of bench/RESULTS.md from it.
``--root`` measures another checkout's code (e.g. ``git archive main | tar -x -C /tmp/main``) on the
same inputs, which is how a "before" column is measured. Each group is one function returning
``(values, details)``; :data:`SOURCES` maps a group to it. A group whose own script exists in the
measured checkout (:data:`SCRIPTS`: bench_million.py for the 1M group) is measured by that script
through a small adapter; adding bench_startup.py / bench_sweep.py is one adapter and one entry each.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
CHILD = str(HERE / "child.py")
sys.path[:0] = [str(HERE)]

from bench_ingest import log_folder, write_log  # noqa: E402
from best import best_of, sink  # noqa: E402

Measured = tuple[dict[str, float], dict[str, str]]


@dataclass(frozen=True)
class Target:
    """One target of issue 17: the value under ``key`` must be ``op`` ``limit``."""

    key: str
    group: str
    what: str
    op: str  # "<=", "<" or ">="
    limit: float
    unit: str

    @property
    def goal(self) -> str:
        return f"{self.op} {self.limit:g}{self.unit}"

    def met(self, value: float) -> bool:
        return {"<=": value <= self.limit, "<": value < self.limit, ">=": value >= self.limit}[self.op]


TARGETS = (
    Target(
        "small_example",
        "startup",
        "analyze fixtures/example.log (590 steps) / bare import of polars+numpy+rich",
        "<=",
        2.5,
        "x",
    ),
    Target("small_10k", "startup", "analyze a 10k-step loss-only text log / bare import", "<=", 2.5, "x"),
    Target(
        "m1_analyze_s",
        "million",
        "analyze --format json, 1M-step text log (195 MB, batch statistics), wall",
        "<",
        3.0,
        " s",
    ),
    Target(
        "m1_vs_reloop",
        "million",
        "analyze 1M (process wall) / a Python `re` loop that only parses it (stage wall); bench/run.py's line shape",
        "<",
        1.0,
        "x",
    ),
    Target("m1_parse_s", "million", "parse 1M-step text log to Parquet, process wall", "<=", 1.0, " s"),
    Target("m1_peak_mb", "million", "peak RSS of analyze 1M", "<=", 1024.0, " MB"),
    Target(
        "jobs2_speedup",
        "sweep",
        "check --jobs 2 vs --jobs 1, 30 runs x 30k steps (wall ratio; same output)",
        ">=",
        1.5,
        "x",
    ),
    Target(
        "per_run_s",
        "sweep",
        "one 30k-step run in one process: (--jobs 1 over 30 runs - over 1 run) / 29",
        "<=",
        0.2,
        " s",
    ),
    Target(
        "tail_latency_s", "tail", "tail: NaN/spike written -> event, median (writer at 100 steps/s)", "<=", 0.3, " s"
    ),
    Target("tail_cpu_pct", "tail", "tail: follower CPU at 100 steps/s, % of one core", "<", 5.0, " %"),
)


def measure(cmd: list[str], repeat: int, cwd: Path) -> dict[str, float]:
    """Best of ``repeat`` fresh runs of ``cmd`` run in ``cwd`` (bench/best.py)."""
    return best_of(cmd, repeat, cwd)


def _ld(*args: str) -> list[str]:
    return [sys.executable, "-m", "logdoctor", *args]


def loss_only_log(steps: int = 10_000, seed: int = 5) -> Path:
    """A seeded loss-only text log (decaying loss, Gaussian noise), generated once into bench/data/."""
    path = DATA / f"lossonly_{steps}.log"
    if not path.exists():
        DATA.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(seed)
        loss = 2 + 3 * np.exp(-np.arange(steps) / (steps / 5)) + rng.normal(0, 0.05, steps)
        path.write_text("".join(f"step {s + 1}/{steps} | loss={v:.4f}\n" for s, v in enumerate(loss)))
    return path


def startup(root: Path, repeat: int) -> Measured:
    """analyze of everyday logs (whole process) against the bare import of polars + numpy + rich."""
    r = max(repeat, 5)
    bare = measure([sys.executable, "-c", "import polars, numpy, rich"], r, root)
    ex = measure(_ld("analyze", str(root / "fixtures" / "example.log"), "-o", sink()), r, root)
    k10 = measure(_ld("analyze", str(loss_only_log()), "-o", sink()), r, root)
    values = {"small_example": ex["wall"] / bare["wall"], "small_10k": k10["wall"] / bare["wall"]}
    details = {
        key: f"{m['wall']:.2f} s wall ({m['cpu']:.2f} CPU) / bare import {bare['wall']:.2f} s ({bare['cpu']:.2f} CPU); "
        f"CPU ratio {m['cpu'] / bare['cpu']:.2f}x"
        for key, m in (("small_example", ex), ("small_10k", k10))
    }
    return values, details


def million(root: Path, repeat: int) -> Measured:
    """analyze and parse of the 1M-step text log, and the `re` loop that only parses it."""
    log = DATA / "canonical_1000000.log"
    if not log.exists():
        write_log(log, 1_000_000)
    an = measure(_ld("analyze", str(log), "--format", "json", "-o", sink()), repeat, root)
    rl = measure([sys.executable, CHILD, "--stage", "re-loop", str(log)], repeat, root)
    with tempfile.TemporaryDirectory() as tmp:
        pa = measure(_ld("parse", str(log), "-o", str(Path(tmp) / "steps.parquet")), repeat, root)
    values = {
        "m1_analyze_s": an["wall"],
        "m1_vs_reloop": an["wall"] / rl["stage_wall"],
        "m1_parse_s": pa["wall"],
        "m1_peak_mb": an["rss_mb"],
    }
    details = {
        "m1_analyze_s": f"{an['wall']:.2f} s wall, {an['cpu']:.2f} s CPU",
        "m1_vs_reloop": f"{an['wall']:.2f} s / re loop {rl['stage_wall']:.2f} s "
        f"(CPU {an['cpu']:.2f} / {rl['stage_cpu']:.2f} s = {an['cpu'] / rl['stage_cpu']:.2f}x)",
        "m1_parse_s": f"{pa['wall']:.2f} s wall, {pa['cpu']:.2f} s CPU, {pa['rss_mb']:.0f} MB",
        "m1_peak_mb": f"{an['rss_mb']:.0f} MB",
    }
    return values, details


def sweep_dir(runs: int = 30, steps: int = 30_000) -> Path:
    """``runs`` seeded text logs of ``steps`` steps with batch statistics, generated once."""
    return log_folder(DATA / f"sweep_{runs}x{steps}", runs, steps)


def sweep(root: Path, repeat: int) -> Measured:
    """check --jobs 1 / --jobs 2 over 30 x 30k runs (JSON outputs compared), and the per-run cost."""
    d = sweep_dir()
    one = d / "run_000.log"
    with tempfile.TemporaryDirectory() as tmp:
        outs = [Path(tmp) / f"jobs{j}.json" for j in (1, 2)]
        j1, j2 = (
            measure(_ld("check", str(d), "--jobs", str(j), "--format", "json", "-o", str(o)), repeat, root)
            for j, o in zip((1, 2), outs, strict=True)
        )
        same = outs[0].read_bytes() == outs[1].read_bytes()
    single = measure(_ld("check", str(one), "--jobs", "1", "--format", "json", "-o", sink()), repeat, root)
    per_run, per_cpu = (j1["wall"] - single["wall"]) / 29, (j1["cpu"] - single["cpu"]) / 29
    values = {"jobs2_speedup": j1["wall"] / j2["wall"] if same else 0.0, "per_run_s": per_run}
    details = {
        "jobs2_speedup": f"{j1['wall']:.1f} s / {j2['wall']:.1f} s wall ({j1['cpu']:.1f} / {j2['cpu']:.1f} CPU); "
        f"outputs {'identical' if same else 'DIFFER'}",
        "per_run_s": f"{per_run:.3f} s wall, {per_cpu:.3f} s CPU (1 run: {single['wall']:.2f} s)",
    }
    return values, details


def tail(root: Path, repeat: int) -> Measured:
    """bench/bench_tail.py latency (20 s) and cpu (30 s) of ``root``."""
    script = str(root / "bench" / "bench_tail.py")

    def run(*args: str) -> dict[str, float]:
        res = subprocess.run([sys.executable, script, *args], capture_output=True, text=True, check=True, cwd=root)
        return dict(json.loads(res.stdout.strip().splitlines()[-1]))

    lat, cpu = run("latency"), run("cpu")
    values = {"tail_latency_s": float(lat["latency_median_s"]), "tail_cpu_pct": 100 * cpu["cpu_share_of_one_core"]}
    details = {
        "tail_latency_s": f"median {lat['latency_median_s']:.2f} s, max {lat['latency_max_s']:.2f} s, "
        f"{lat['reported']}/{lat['marks']} marks reported",
        "tail_cpu_pct": f"{cpu['cpu_s']:.2f} s CPU in {cpu['seconds']:.0f} s, {cpu['maxrss_mib']:.0f} MiB",
    }
    return values, details


def _script_doc(script: Path, *args: str) -> dict[str, Any]:
    """The JSON document a bench script prints (its whole stdout)."""
    res = subprocess.run(
        [sys.executable, str(script), *args], capture_output=True, text=True, check=True, cwd=script.parent.parent
    )
    return dict(json.loads(res.stdout[res.stdout.index("{") :]))


def million_script(root: Path, repeat: int) -> Measured:
    """The 1M group from bench/bench_million.py (its text and emit-shaped logs; the worse of the two)."""
    doc = _script_doc(root / "bench" / "bench_million.py", "--repeat", str(repeat), "--text-only")
    logs = {k: v for k, v in doc.items() if isinstance(v, dict) and "parse" in v}
    worst = {
        "m1_analyze_s": max(v["analyze"]["wall"] for v in logs.values()),
        "m1_vs_reloop": max(v["ratio_wall"] for v in logs.values()),
        "m1_parse_s": max(v["parse"]["wall"] for v in logs.values()),
        "m1_peak_mb": max(max(v["parse"]["rss_mb"], v["analyze"]["rss_mb"]) for v in logs.values()),
    }

    def each(fn: Callable[[dict[str, Any]], str]) -> str:
        return "; ".join(f"{label} ({v['mb']} MB): {fn(v)}" for label, v in logs.items())

    details = {
        "m1_analyze_s": each(lambda v: f"{v['analyze']['wall']:.2f} s wall, {v['analyze']['cpu']:.2f} CPU"),
        "m1_vs_reloop": each(lambda v: f"{v['analyze']['wall']:.2f} / {v['re_loop']['wall']:.2f} s"),
        "m1_parse_s": each(lambda v: f"{v['parse']['wall']:.2f} s wall, {v['parse']['cpu']:.2f} CPU"),
        "m1_peak_mb": each(lambda v: f"parse {v['parse']['rss_mb']:.0f} / analyze {v['analyze']['rss_mb']:.0f} MB"),
    }
    return worst, details


#: group -> measurement; replace an entry to measure a group another way (same keys as TARGETS).
SOURCES: dict[str, Callable[[Path, int], Measured]] = {
    "startup": startup,
    "million": million,
    "sweep": sweep,
    "tail": tail,
}
#: group -> (script in bench/, its adapter): used instead of SOURCES when the measured checkout has it.
SCRIPTS: dict[str, tuple[str, Callable[[Path, int], Measured]]] = {
    "million": ("bench_million.py", million_script),
}


def source(group: str, root: Path) -> Callable[[Path, int], Measured]:
    """The measurement of ``group`` for the checkout at ``root``: its own bench script when it has one."""
    script, adapter = SCRIPTS.get(group, ("", SOURCES[group]))
    return adapter if script and (root / "bench" / script).is_file() else SOURCES[group]


#: Two machine yardsticks, each in a fresh process (best of 3): a pure-Python loop (CPU speed) and
#: writing 256 MB of fresh memory (page faults: ~0.03 s on bare metal, ~0.4 s in some VMs). Absolute
#: targets (seconds, % of a core) move with both; they tell a reader how this machine compares.
_YARDSTICKS = {
    "python_loop_s": "import time; t = time.perf_counter(); s = 0\nfor i in range(10_000_000): s += i\n"
    "print(time.perf_counter() - t)",
    "fresh_256mb_s": "import time, numpy as np; t = time.perf_counter(); np.ones(256 * 2**20, np.uint8)\n"
    "print(time.perf_counter() - t)",
}


def yardsticks() -> dict[str, float]:
    """Seconds of each machine yardstick (best of 3 fresh processes)."""
    out = {}
    for key, code in _YARDSTICKS.items():
        runs = [
            subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True) for _ in range(3)
        ]
        out[key] = round(min(float(r.stdout) for r in runs), 3)
    return out


def measure_targets(repeat: int, groups: list[str] | None = None, root: Path = HERE.parent) -> dict[str, object]:
    """Measure the chosen groups; the JSON-ready document stored in RESULTS.md."""
    values: dict[str, float] = {}
    details: dict[str, str] = {}
    load0 = os.getloadavg()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root, check=False
    ).stdout.strip()  # the code measured: HEAD when the run starts
    for group in groups or list(SOURCES):
        v, d = source(group, root)(root, repeat)
        values |= v
        details |= d
    return {
        "commit": commit or str(root),
        "cores": os.cpu_count(),
        "load": [round(load0[0], 2), round(os.getloadavg()[0], 2)],
        "machine": yardsticks(),
        "values": values,
        "details": details,
    }


def main() -> int:
    """Measure and print (or write) the targets document."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", choices=list(SOURCES), help="groups to measure (default: all)")
    ap.add_argument("--root", type=Path, default=HERE.parent, help="checkout whose code is measured")
    ap.add_argument("--json", type=Path, help="write the document here too")
    args = ap.parse_args()
    import datetime as dt

    doc = {
        "measured": f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        **measure_targets(args.repeat, args.only, args.root.resolve()),
    }
    text = json.dumps(doc, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
