"""The Python API's costs: ``import logdoctor`` against the CLI's start, a whole API run against the
command's, and records in memory against their file.

Usage (from the repository root): ``python bench/bench_api.py [--repeat 5]``; prints one JSON document.
Fresh processes go through bench/child.py (``--rusage``: wall, CPU, peak RSS of the command alone),
the best wall of ``--repeat`` kept. In-process rows time ``logdoctor.analyze`` only (imports and a
warm-up call excluded), best of ``--repeat``. The 10k-step log with batch statistics is
bench_ingest's (written once to bench/data/, git-ignored), read from JSON lines.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
sys.path[:0] = [str(HERE), str(ROOT)]

import best  # noqa: E402

EXAMPLE = str(ROOT / "fixtures" / "example.log")


def jsonl_log(steps: int = 10_000) -> Path:
    """A seeded JSON-lines log of ``steps`` steps with batch statistics (the canonical log's fields)."""
    path = DATA / f"canonical_{steps}.jsonl"
    if not path.exists():
        import math
        import random

        rng = random.Random(7)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as fh:
            for s in range(1, steps + 1):
                n = rng.randint(8, 32)
                mean = rng.uniform(64, 512)
                fh.write(
                    json.dumps(
                        {
                            "step": s,
                            "loss": round(2 + 3 * math.exp(-s / 2000) + rng.gauss(0, 0.05), 4),
                            "lr": 3e-4,
                            "grad_norm": round(rng.uniform(0.5, 1.5), 3),
                            "epoch": s // 2000,
                            "n_seq": n,
                            "tokens": int(n * mean),
                            "len_mean": round(mean, 1),
                        }
                    )
                    + "\n"
                )
    return path


def fresh(repeat: int) -> dict[str, dict[str, float]]:
    """Wall / CPU / peak RSS of fresh processes: a bare interpreter, the import, the CLI's start, and
    a whole run through the API and through the command."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "logdoctor", "analyze", EXAMPLE, "-o", best.sink()],
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
    )  # warm-up: bytecode, as an installed package has it
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import logdoctor": [sys.executable, "-c", "import logdoctor"],
        "CLI start (logdoctor --version)": [sys.executable, "-m", "logdoctor", "--version"],
        "API: analyze(example.log).to_json()": [
            sys.executable,
            "-c",
            f"import logdoctor; logdoctor.analyze({EXAMPLE!r}).to_json()",
        ],
        "CLI: analyze example.log -f json": [
            sys.executable,
            "-m",
            "logdoctor",
            "analyze",
            EXAMPLE,
            "-f",
            "json",
            "-o",
            best.sink(),
        ],
    }
    out = {}
    for label, cmd in commands.items():
        r = best.best_of(cmd, repeat, ROOT)
        out[label] = {"wall": round(r["wall"], 3), "cpu": round(r["cpu"], 3), "rss_mb": round(r["rss_mb"])}
    return out


def in_process(repeat: int) -> dict[str, float]:
    """Seconds of ``analyze`` of the 10k-step log: its path, then the same rows in memory."""
    import pandas as pd
    import polars as pl

    import logdoctor

    path = jsonl_log()
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    sources = {
        "path": str(path),
        "polars DataFrame": pl.DataFrame(rows),
        "pandas DataFrame": pd.DataFrame(rows),
        "list of dicts": rows,
    }
    out = {}
    for label, source in sources.items():
        logdoctor.analyze(source)  # warm-up: every module loaded
        walls = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            logdoctor.analyze(source)
            walls.append(time.perf_counter() - t0)
        out[label] = round(min(walls), 3)
    return out


def measure(repeat: int = 5) -> dict[str, object]:
    """Both tables, and the ratio that the API's promise is about."""
    procs = fresh(repeat)
    imp, cli = procs["import logdoctor"]["wall"], procs["CLI start (logdoctor --version)"]["wall"]
    return {
        "fresh_processes": procs,
        "import_over_cli_start": round(imp / cli, 3),
        "analyze_10k_jsonl_seconds": in_process(repeat),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs of each measurement; the best is kept")
    print(json.dumps(measure(ap.parse_args().repeat), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
