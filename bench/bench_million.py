"""Issue 17's million-step targets in one run, as ratios: ``python bench/bench_million.py [--repeat 1]``.

Inputs (seeded, written once into bench/data/, git-ignored): bench/run.py's 1M text log
(``canonical_1000000.log``: per-batch statistics on every line, ~195 bytes a line), a 1M log in the
shape logdoctor.emit writes (``emit_1000000.log``: full-precision floats and 16-hex fingerprints,
~190 bytes a line, like the issue's 173 MB log), and the 1M JSONL and CSV tables of bench/run.py.
For each text log it measures, each in a fresh process (bench/child.py --rusage), the process wall
and CPU and peak RSS of ``logdoctor parse`` (to parquet) and ``logdoctor analyze --format json``,
and a plain Python ``re`` loop that only parses the file (bench_ingest.re_loop); for the tables,
``analyze`` alone. Prints one JSON document (also written to bench/out/million.json); targets:
parse <= 1 s, analyze < 3 s and < the re loop (ratio < 1), peak RSS <= 1 GB.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
CHILD = str(HERE / "child.py")
STEPS = 1_000_000
TARGETS = {"parse_s": 1.0, "analyze_s": 3.0, "ratio": 1.0, "rss_mb": 1024.0}
sys.path[:0] = [str(HERE), str(HERE.parent)]

from best import best_of, sink  # noqa: E402


def write_emit_log(path: Path, steps: int = STEPS, seed: int = 17) -> None:
    """Lines as logdoctor.emit writes them: loss, lr, epoch, then the batch's statistics."""
    import polars as pl

    rng = np.random.default_rng(seed)
    t = np.arange(1, steps + 1)
    n_seq = rng.integers(1, 64, steps)
    lens = rng.integers(20, 1024, (steps, 2))
    lo, hi = lens.min(axis=1), lens.max(axis=1)
    mean = lo + (hi - lo) * rng.random(steps)
    frame = pl.DataFrame(
        {
            "s": t,
            "loss": np.round(2 + 2 * np.exp(-t / 2e5) + rng.normal(0, 0.2, steps), 4),
            "epoch": t // 5000,
            "n_seq": n_seq,
            "tokens": (n_seq * mean).astype(np.int64),
            "len_mean": mean,
            "len_min": lo,
            "len_max": hi,
            "pad_frac": rng.random(steps) * 0.3,
            "fp": rng.integers(0, 2**63, steps),
        }
    )
    line = pl.format(
        "step {}/" + str(steps) + " | loss={} lr=0.0003 epoch={} | batch: n_seq={} tokens={} "
        "len_mean={} len_min={} len_max={} pad_frac={} batch_fp={}",
        "s",
        "loss",
        "epoch",
        "n_seq",
        "tokens",
        "len_mean",
        "len_min",
        "len_max",
        "pad_frac",
        pl.col("fp").map_elements(lambda v: f"{v:016x}", return_dtype=pl.String),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(frame.select(line).to_series().to_list()) + "\n")


def inputs() -> dict[str, Path]:
    """Generate (once) and return the inputs by label."""
    from bench_ingest import write_log
    from run import write_table

    out = {"text 1M": DATA / f"canonical_{STEPS}.log", "emit 1M": DATA / f"emit_{STEPS}.log"}
    if not out["text 1M"].exists():
        write_log(out["text 1M"], STEPS)
    if not out["emit 1M"].exists():
        write_emit_log(out["emit 1M"])
    for kind in ("jsonl", "csv"):
        out[f"{kind} 1M"] = p = DATA / f"table_{STEPS}.{kind}"
        if not p.exists():
            write_table(p, STEPS, kind)
    return out


def measure(cmd: list[str], repeat: int) -> dict[str, float]:
    """Best of ``repeat`` fresh runs: wall, cpu, rss_mb (bench/best.py), rounded."""
    return {k: round(v, 3) for k, v in best_of(cmd, repeat).items()}


def bench_text(path: Path, repeat: int) -> dict[str, object]:
    """parse, analyze and the re loop on one text log, and the ratios against the targets."""
    ld = [sys.executable, "-m", "logdoctor"]
    parse = measure([*ld, "parse", str(path), "-o", str(HERE / "out" / "million.parquet")], repeat)
    analyze = measure([*ld, "analyze", str(path), "--format", "json", "-o", sink()], repeat)
    loop = measure([sys.executable, CHILD, "--stage", "re-loop", str(path)], repeat)
    return {
        "mb": round(path.stat().st_size / 1e6, 1),
        "parse": parse,
        "analyze": analyze,
        "re_loop": loop,
        "ratio_wall": round(analyze["wall"] / loop["wall"], 3),
        "ratio_cpu": round(analyze["cpu"] / loop["cpu"], 3),
        "met": {
            "parse_s": parse["wall"] <= TARGETS["parse_s"],
            "analyze_s": analyze["wall"] < TARGETS["analyze_s"],
            "ratio": analyze["wall"] / loop["wall"] < TARGETS["ratio"],
            "rss_mb": max(parse["rss_mb"], analyze["rss_mb"]) <= TARGETS["rss_mb"],
        },
    }


def main() -> int:
    """Measure every input; print the JSON document and write it to bench/out/million.json."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="fresh runs of each; the best wall is kept")
    ap.add_argument("--text-only", action="store_true", help="skip the JSONL and CSV tables")
    args = ap.parse_args()
    (HERE / "out").mkdir(exist_ok=True)
    # measure an installed package: its bytecode compiled (PYTHONDONTWRITEBYTECODE would leave
    # every process compiling logdoctor's sources again, ~0.3 s)
    compileall.compile_dir(str(HERE.parent / "logdoctor"), quiet=1)
    doc: dict[str, object] = {"steps": STEPS, "cores": os.cpu_count(), "load": os.getloadavg()[0]}
    for label, path in inputs().items():
        if label.startswith(("text", "emit")):
            doc[label] = bench_text(path, args.repeat)
        elif not args.text_only:
            cmd = [sys.executable, "-m", "logdoctor", "analyze", str(path), "--format", "json", "-o", sink()]
            doc[label] = {"analyze": measure(cmd, args.repeat)}
    doc["load_end"] = os.getloadavg()[0]
    text = json.dumps(doc, indent=2)
    (HERE / "out" / "million.json").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
