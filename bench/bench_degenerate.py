"""Degenerate line logs (issue 27, point 6): time and peak RSS of ``analyze`` on a huge single line
and on a log followed by a long run of NUL bytes, each in a fresh process.

    python bench/bench_degenerate.py --size-mb 200             # this checkout
    python bench/bench_degenerate.py --size-mb 50 --code /work/main   # another checkout (before)

Each case is a healthy 3,000-step log with the degenerate part after it (and 500 more steps after a
long line); files are written to a temporary folder and removed. Peak RSS is the child's own
(``RUSAGE_CHILDREN`` of a fresh parent). Also times the clean-file scan that decides whether a plain
log needs the filter (the cost every healthy log pays) on a 1.5M-step, 74 MB text log.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAD = "".join(f"step {i} loss {3 - 0.0002 * i:.4f} lr 0.001\n" for i in range(1, 3001)).encode()
MORE = "".join(f"step {i} loss {2.4 - 0.0002 * i:.4f} lr 0.001\n" for i in range(3001, 3501)).encode()
_MEASURE = (
    "import json, resource, subprocess, sys, time; t = time.perf_counter(); "
    "p = subprocess.run(sys.argv[1:], capture_output=True); w = time.perf_counter() - t; "
    "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(json.dumps({'wall_s': w, 'cpu_s': u.ru_utime + u.ru_stime, 'peak_mb': u.ru_maxrss / 1024, "
    "'rc': p.returncode, 'out': p.stdout.decode(errors='replace'), "
    "'err': p.stderr.decode(errors='replace')[-300:]}))"
)


def _write(path: Path, parts: list[bytes | tuple[bytes, int]]) -> int:
    """Write ``parts`` (bytes, or (byte, count) written in 1 MiB pieces); return the size."""
    with path.open("wb") as fh:
        for part in parts:
            if isinstance(part, tuple):
                byte, count = part
                block = byte * (1 << 20)
                for _ in range(count // len(block)):
                    fh.write(block)
                fh.write(byte * (count % len(block)))
            else:
                fh.write(part)
    return path.stat().st_size


def measure(code: Path, log: Path) -> dict[str, object]:
    """Run ``analyze --format json`` on ``log`` with ``code`` first on the path, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(code), "NO_COLOR": "1"}
    cmd = [sys.executable, "-c", _MEASURE, sys.executable, "-m", "logdoctor", "analyze", str(log), "-f", "json"]
    # run from the checkout: ``python -m`` puts the working folder first on the path
    res = json.loads(subprocess.run(cmd, capture_output=True, text=True, env=env, check=True, cwd=code).stdout)
    try:
        doc = json.loads(res["out"]) if res["rc"] in (0, 1) else {}
    except ValueError:
        doc = {}
    res["rows"] = doc.get("structure", {}).get("rows") if doc else None
    res["degenerate"] = doc.get("source", {}).get("degenerate") if doc else None
    res["notes"] = [n for n in doc.get("source", {}).get("notes", []) if "NUL" in n or "cut" in n] if doc else []
    del res["out"]
    return res


def scan_cost(code: Path, folder: Path) -> dict[str, float]:
    """Seconds of the clean-file scan on a healthy 1.5M-step text log (best of 3, in-process)."""
    log = folder / "clean.log"
    with log.open("w") as fh:
        for i in range(1, 1_500_001):
            fh.write(f"step {i} loss {2 + (i % 97) / 100:.4f} lr 0.0003 grad_norm 1.23\n")
    script = (
        "import sys, time; from logdoctor.ingest.bounded import _is_clean; "
        "from logdoctor.ingest.sources import open_source; s = open_source(sys.argv[1]); best = 9e9\n"
        "for _ in range(3):\n t = time.perf_counter(); ok = _is_clean(s, 1 << 20, 4096); "
        "best = min(best, time.perf_counter() - t)\nprint(best, ok)"
    )
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run(
        [sys.executable, "-c", script, str(log)], capture_output=True, text=True, env=env, check=True, cwd=code
    )
    best, ok = out.stdout.split()
    size = log.stat().st_size
    log.unlink()
    return {"size_mb": size / 1e6, "scan_s": float(best), "clean": ok == "True"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, default=200.0, help="size of the long line / NUL run (MB)")
    ap.add_argument("--code", type=Path, default=REPO, help="checkout to measure (PYTHONPATH)")
    ap.add_argument("--cases", default="line,nul,scan", help="comma-separated: line, nul, scan")
    args = ap.parse_args()
    n = int(args.size_mb * 1e6)
    cases = args.cases.split(",")
    with tempfile.TemporaryDirectory(prefix="ld-degenerate-") as tmp:
        folder = Path(tmp)
        now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        print(json.dumps({"code": str(args.code), "size_mb": args.size_mb, "time": now, "load": os.getloadavg()}))
        if "line" in cases:
            log = folder / "line.log"
            size = _write(log, [HEAD, (b"x", n), b"\n", MORE])
            case = f"single line of {args.size_mb:g} MB"
            print(json.dumps({"case": case, "file_mb": size / 1e6, **measure(args.code, log)}))
            log.unlink()
        if "nul" in cases:
            log = folder / "nul.log"
            size = _write(log, [HEAD, (b"\x00", n)])
            case = f"log + {args.size_mb:g} MB of NUL bytes"
            print(json.dumps({"case": case, "file_mb": size / 1e6, **measure(args.code, log)}))
            log.unlink()
        if "scan" in cases:
            print(json.dumps({"case": "clean-file scan", **scan_cost(args.code, folder)}))


if __name__ == "__main__":
    main()
