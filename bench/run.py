"""All of logdoctor's benchmarks in one command: seeded inputs, a table, and bench/RESULTS.md.

Usage (from the repository root): ``python bench/run.py [--repeat 3] [--quick] [--cap 120] [--before SRC]``.
The "Targets" section at the top measures issue 17's targets (bench/targets.py) beside the numbers of
the last full run kept in RESULTS.md (``--before`` takes them from a targets JSON file, another
RESULTS.md, or a git ref's bench/RESULTS.md instead). ``--quick`` (small inputs, start-up targets
only) writes bench/RESULTS.quick.md (git-ignored) and leaves RESULTS.md, with its 1M rows, alone.
Inputs are generated once into bench/data/ (git-ignored): text logs with batch statistics at 10k,
100k and 1M steps (bench_ingest.write_log), JSONL and CSV at 1M steps. Every measurement runs in a
fresh child process started through a fresh intermediate one, whose ``RUSAGE_CHILDREN`` gives the
child's own peak RSS and CPU time. Each is repeated ``--repeat`` times and the best wall is kept;
ratios compare numbers measured in the same run (the machine is shared and noisy).
pandas columns need the ``bench`` extra (``pip install pandas``); they are skipped without it.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
CHILD = str(HERE / "child.py")
KEEP = "<!-- hand-written notes below this line are kept when run.py rewrites the file -->"
sys.path[:0] = [str(HERE), str(ROOT)]

from bench_ingest import log_folder, write_log  # noqa: E402
from best import best_of, sink  # noqa: E402

PANDAS = importlib.util.find_spec("pandas") is not None


def write_table(path: Path, steps: int, kind: str, seed: int = 11) -> None:
    """A seeded 1M-style table (decaying loss with a length effect) as JSONL or CSV."""
    import polars as pl

    rng = np.random.default_rng(seed)
    t = np.arange(1, steps + 1)
    lo, hi = rng.integers(40, 600, steps), rng.integers(600, 2048, steps)
    df = pl.DataFrame(
        {
            "step": t,
            "loss": 2 + 8 * np.exp(-t / (steps / 20)) + rng.normal(0, 0.05, steps),
            "acc": rng.random(steps),
            "lr": np.full(steps, 3e-4),
            "grad_norm": rng.random(steps) * 2,
            "epoch": t // 5000,
            "n_seq": rng.integers(8, 17, steps),
            "tokens": rng.integers(6000, 9000, steps),
            "len_mean": (lo + hi) / 2,
            "len_min": lo,
            "len_max": hi,
            "pad_frac": rng.random(steps) / 10,
        }
    )
    df.write_ndjson(path) if kind == "jsonl" else df.write_csv(path)


def inputs(quick: bool) -> dict[str, Path]:
    """Generate (once) and return the benchmark inputs by label."""
    DATA.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    for n in (10_000, 100_000) if quick else (10_000, 100_000, 1_000_000):
        out[f"text {n // 1000}k"] = p = DATA / f"canonical_{n}.log"
        if not p.exists():
            write_log(p, n)
    if not quick:
        for kind in ("jsonl", "csv"):
            out[f"{kind} 1000k"] = p = DATA / f"table_1000000.{kind}"
            if not p.exists():
                write_table(p, 1_000_000, kind)
    return out


# --- the parent ----------------------------------------------------------------------------------


def measure(cmd: list[str], repeat: int) -> dict[str, float]:
    """Best of ``repeat`` fresh runs of ``cmd`` (bench/best.py)."""
    return best_of(cmd, repeat)


def _stage_cmd(kind: str, arg: str) -> list[str]:
    return [sys.executable, CHILD, "--stage", kind, arg]


def _analyze_cmd(path: Path) -> list[str]:
    return [sys.executable, "-m", "logdoctor", "analyze", str(path), "--format", "json", "-o", sink()]


def bench_ingest_and_analyze(files: dict[str, Path], repeat: int) -> list[list[str]]:
    """Sections (1) ingest vs re loop vs pandas and (2) the full ``analyze --format json`` process."""
    rows: list[list[str]] = []
    for label, path in files.items():
        ld = measure(_stage_cmd("ingest", str(path)), repeat)
        rows.append(row("ingest logdoctor", label, ld, f"{ld['value']:.0f} steps"))
        if label.startswith("text"):
            rl = measure(_stage_cmd("re-loop", str(path)), repeat)
            rows.append(
                row("ingest re loop", label, rl, f"logdoctor {rl['stage_wall'] / ld['stage_wall']:.1f}x faster")
            )
        if PANDAS:
            pd_ = measure(_stage_cmd("pandas", str(path)), repeat)
            rows.append(
                row("ingest pandas", label, pd_, f"logdoctor {pd_['stage_wall'] / ld['stage_wall']:.1f}x faster")
            )
        an = measure(_analyze_cmd(path), repeat)
        note = f"process; re loop alone: {rl['stage_wall']:.2f} s" if label.startswith("text") else "process"
        rows.append(row("analyze --format json", label, an, note, stage=False))
    if not PANDAS:
        rows.append(["ingest pandas", "-", "-", "-", "-", "skipped: pandas not installed (bench extra)"])
    return rows


def bench_linear(files: dict[str, Path], repeat: int) -> list[list[str]]:
    """Analysis stage alone (load excluded) on the text logs, and its growth from the smallest."""
    rows, base = [], None
    for label, path in files.items():
        if label.startswith("text"):
            r = measure(_stage_cmd("analysis", str(path)), repeat)
            base = base or r["stage_wall"]
            rows.append(row("analysis stage", label, r, f"{r['stage_wall'] / base:.0f}x the 10k time"))
    return rows


def bench_stages(sizes: list[int], repeat: int) -> list[list[str]]:
    """Sections (3) and (4) at full scale: ChangepointDetector and PeriodicityDetector alone."""
    rows = []
    for kind in ("changepoints", "spectral"):
        for n in sizes:
            r = measure(_stage_cmd(kind, str(n)), repeat)
            rows.append(row(f"{kind} stage", f"synthetic {n // 1000}k", r, f"{r['value']:.0f} finding(s)"))
    return rows


def bench_cpsearch(sizes: list[int], cap_s: float) -> list[list[str]]:
    """Section (3) against ruptures: exhaustive Pelt (l2, defaults and jump=1) and KernelCPD."""
    import ruptures as rpt
    from bench_analysis import agree, capped, timed

    from logdoctor.detectors.cpsearch import fast_breakpoints

    rows = []
    for n in sizes:
        sig, _truth = rpt.pw_constant(n, 1, 5, noise_std=1.0, seed=n)
        y, pen = sig[:, 0], 3.0 * np.log(n)
        t_fast, fast = timed(lambda y=y, pen=pen: fast_breakpoints(y, pen), repeat=3)
        rows.append(["cp search fast", f"pw_constant {n}", f"{t_fast:.4f}", "-", "-", f"bkps {fast}"])
        for kind in ("pelt5", "pelt1", "kcpd"):
            if kind == "pelt1" and n > 5000:
                continue
            t, bk = capped(kind, y, pen, cap_s)
            same = agree(bk, fast)  # type: ignore[arg-type]
            note = f"{t / t_fast:.0f}x slower; same bkps (<=3 steps): {same}; {bk}" if t else f"> {cap_s:.0f} s cap"
            rows.append([f"cp search ruptures {kind}", f"pw_constant {n}", f"{t:.3f}" if t else "-", "-", "-", note])
    return rows


def bench_startup(repeat: int) -> list[list[str]]:
    """Import and start-up: ``python -m logdoctor --help``."""
    r = measure([sys.executable, "-m", "logdoctor", "--help"], max(repeat, 5))
    return [row("logdoctor --help", "-", r, "import + start-up", stage=False)]


def bench_many(repeat: int, runs: int = 50, steps: int = 20_000) -> list[list[str]]:
    """Section (5): ``check DIR --jobs 1`` vs ``--jobs 2`` on a sweep of generated runs."""
    sweep = log_folder(DATA / f"sweep_{runs}x{steps}", runs, steps)
    out, base = [], None
    for jobs in (1, 2):
        cmd = [sys.executable, "-m", "logdoctor", "check", str(sweep), "--jobs", str(jobs), "-o", sink()]
        r = measure(cmd, repeat)
        base = base or r["wall"]
        out.append(
            row(
                f"check --jobs {jobs}",
                f"{runs} x {steps // 1000}k",
                r,
                f"{base / r['wall']:.2f}x vs --jobs 1",
                stage=False,
            )
        )
    return out


def row(name: str, label: str, r: dict[str, float], note: str, stage: bool = True) -> list[str]:
    """One table row: stage wall/CPU when the child timed its stage, else the process's own."""
    wall, cpu = (r["stage_wall"], r["stage_cpu"]) if stage and "stage_wall" in r else (r["wall"], r["cpu"])
    err = f" (exit {r['error']:.0f})" if "error" in r else ""
    return [name, label, f"{wall:.3f}", f"{cpu:.3f}", f"{r['rss_mb']:.0f}", note + err]


def before_doc(source: str | None, results: Path) -> dict[str, object] | None:
    """The targets document of the last full run: from RESULTS.md, a JSON file, or a git ref's RESULTS.md."""
    from report import read_doc

    if source is None:
        text = results.read_text(encoding="utf-8") if results.exists() else ""
    elif Path(source).is_file():
        text = Path(source).read_text(encoding="utf-8")
        if source.endswith(".json"):
            return dict(json.loads(text))
    else:
        text = subprocess.run(
            ["git", "show", f"{source}:bench/RESULTS.md"], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
    doc = read_doc(text)
    return {k: v for k, v in doc.items() if k != "before"} if doc else None


def main() -> int:
    """Generate the inputs, run every section, print the table and write bench/RESULTS.md."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the best is kept")
    ap.add_argument("--quick", action="store_true", help="10k/100k text only, no 20k exhaustive PELT")
    ap.add_argument("--cap", type=float, default=120.0, help="seconds allowed to each exhaustive search")
    ap.add_argument("--before", help="targets JSON, RESULTS.md or git ref for the 'before' column")
    args = ap.parse_args()
    # measure an installed package: its bytecode cached, as on a user's machine (this sandbox sets
    # PYTHONDONTWRITEBYTECODE, which recompiles logdoctor's ~170 modules in every process)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(str(HERE.parent / "logdoctor"), quiet=1)
    from report import targets_lines, write_results
    from targets import measure_targets

    load0, start = os.getloadavg(), dt.datetime.now(dt.UTC)
    files = inputs(args.quick)
    sections = {
        "Start-up": bench_startup(args.repeat),
        "Ingest (stage wall, imports excluded) and full analyze (process wall)": bench_ingest_and_analyze(
            files, args.repeat
        ),
        "Analysis stage alone (load excluded): growth with steps": bench_linear(files, args.repeat),
        "Changepoint and spectral stages alone": bench_stages(
            [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000], args.repeat
        ),
        "Changepoint search vs exhaustive ruptures (same L2 penalty)": bench_cpsearch(
            [1000, 5000] if args.quick else [1000, 5000, 20_000], args.cap
        ),
        "Many runs": bench_many(args.repeat, runs=10 if args.quick else 50),
    }
    out = HERE / ("RESULTS.quick.md" if args.quick else "RESULTS.md")
    before = before_doc(args.before, HERE / "RESULTS.md")
    doc = {
        "measured": f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC",
        **measure_targets(args.repeat, ["startup"] if args.quick else None),
    }
    write_results(out, sections, start, load0, os.getloadavg(), args.repeat, KEEP, targets_lines(doc, before))
    if not args.quick:  # the README's performance table follows RESULTS.md (tests/unit/test_perf_table.py)
        from report import update_readme

        update_readme(ROOT / "README.md", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
