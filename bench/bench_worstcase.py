"""Worst-case inputs against the limits: ``python bench/bench_worstcase.py [--only NAME] [--cap-gb 4]``.

Each case is written into a temporary folder and analysed by ``logdoctor analyze`` in a child
process under an address-space cap (``--cap-gb``, so that a regression fails instead of taking
the machine), which reports its peak RSS (``ru_maxrss``) and wall time. A case passes when the
child exits 0, 1 or 2 without a traceback, within ``TARGET_S`` seconds and ``TARGET_MB`` MB;
the notice the limit prints is shown. The script exits 1 when a case fails.

Cases (one per dimension of the input):

* ``text-keys``: 10,000 lines whose key name changes every line (143 KB class: 17 GB, 113 s before
  the key budget);
* ``text-keys-long``: the same over 200,000 lines (1.1 GB while the names kept were all of the
  most frequent 256, each on one line);
* ``jsonl-keys``: 10,000 JSON lines, 5 new keys each (50,000 names; >300 s before);
* ``state-keys``: a trainer_state.json whose 10,000 entries each add a key (a polars abort at
  2.7 GB under a 6 GB cap before);
* ``csv-columns``: a CSV of 2,000 columns;
* ``long-line``: one 64 MiB line among step lines (the line limit);
* ``deep-json``: a trainer_state.json nested 100,000 levels deep;
* ``gzip-bomb``: 1 GiB of zeros gzipped (the decompressed size against the memory budget);
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 10.0
TARGET_MB = 500.0
#: Cases whose time grows with the bytes read, not with a dimension a limit cuts: the gzip bomb is
#: decompressed and its NUL runs skipped at ~16 s per GiB on the 2-core machine (its memory is what
#: the budget bounds).
#: The long key explosion plans each of its 200,000 line shapes once (~40 us a shape): linear in lines.
TIME_S = {"gzip-bomb": 30.0, "text-keys-long": 30.0}


def text_keys(d: Path) -> Path:
    path = d / "keys.log"
    path.write_text("".join(f"step {i} loss={2 - i * 1e-4:.4f} k{i}_m={i % 97 / 97:.3f}\n" for i in range(10_000)))
    return path


def text_keys_long(d: Path) -> Path:
    path = d / "keys_long.log"
    with path.open("w") as fh:
        fh.writelines(f"step {i} loss={2 - i * 1e-6:.6f} k{i}_m={i % 7}\n" for i in range(200_000))
    return path


def jsonl_keys(d: Path) -> Path:
    path = d / "keys.jsonl"
    with path.open("w") as fh:
        for i in range(10_000):
            rec: dict[str, float] = {"step": i, "loss": 2 - i * 1e-4}
            rec.update({f"m{5 * i + j}": j / 5 for j in range(5)})
            fh.write(json.dumps(rec) + "\n")
    return path


def state_keys(d: Path) -> Path:
    path = d / "trainer_state.json"
    history = [{"step": i, "loss": 2 - i * 1e-4, f"m{i}": 0.5} for i in range(1, 10_001)]
    path.write_text(json.dumps({"log_history": history, "global_step": 10_000}))
    return path


def csv_columns(d: Path) -> Path:
    path = d / "wide.csv"
    n = 2000
    with path.open("w") as fh:
        fh.write("step,loss," + ",".join(f"m{j}" for j in range(n)) + "\n")
        row = ",".join("1" for _ in range(n))
        fh.writelines(f"{i},{2 - i / 1e4},{row}\n" for i in range(2000))
    return path


def long_line(d: Path) -> Path:
    path = d / "long.log"
    with path.open("w") as fh:
        fh.writelines(f"step {i} loss={2 - i / 1e4:.4f}\n" for i in range(2000))
        fh.write("x" * (64 * 1024 * 1024) + "\n")
        fh.writelines(f"step {i} loss={2 - i / 1e4:.4f}\n" for i in range(2000, 4000))
    return path


def deep_json(d: Path) -> Path:
    path = d / "trainer_state.json"
    history = json.dumps({"log_history": [{"step": i, "loss": 1 - i / 100} for i in range(1, 50)]})
    path.write_text(history[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return path


def gzip_bomb(d: Path) -> Path:
    path = d / "bomb.log.gz"
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.write(b"step 1 loss=2.0\n")
        block = b"\0" * (1 << 20)
        for _ in range(1024):
            fh.write(block)
    return path


CASES: dict[str, Callable[[Path], Path]] = {
    "text-keys": text_keys,
    "text-keys-long": text_keys_long,
    "jsonl-keys": jsonl_keys,
    "state-keys": state_keys,
    "csv-columns": csv_columns,
    "long-line": long_line,
    "deep-json": deep_json,
    "gzip-bomb": gzip_bomb,
}


def _child(path: Path, cap: int) -> tuple[int, float, float, str]:
    """(exit code, wall seconds, peak RSS MB, stderr) of ``logdoctor analyze path`` under ``cap`` bytes."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "logdoctor", "analyze", str(path), "-f", "json"],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=limit,
        cwd=ROOT,
    )
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    notice = next((n for n in _notes(proc.stdout) if "metric names" in n or "NUL" in n or "cut" in n), "")
    return proc.returncode, wall, peak, proc.stderr + notice


def _notes(out: str) -> list[str]:
    try:
        doc = json.loads(out)
    except ValueError:
        return []
    return [str(n) for n in doc.get("source", {}).get("notes", [])]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=sorted(CASES))
    ap.add_argument("--cap-gb", type=float, default=4.0)
    args = ap.parse_args()
    failed = 0
    for name, make in CASES.items():
        if args.only and name != args.only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            path = make(Path(tmp))
            # each case in its own grandchild, so that ru_maxrss of RUSAGE_CHILDREN is this case's
            cap = int(args.cap_gb * 1024**3)
            code = (
                f"import sys, json; sys.path.insert(0, {str(ROOT / 'bench')!r}); import bench_worstcase as b; "
                f"from pathlib import Path; print(json.dumps(b._child(Path({str(path)!r}), {cap})))"
            )
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            rc, wall, peak, err = json.loads(out)
        notice = next(
            (
                ln
                for ln in err.splitlines()[::-1]
                if ln.startswith(("kept", "logdoctor:")) or " cut " in ln or "NUL" in ln
            ),
            "",
        )
        ok = rc in (0, 1, 2) and "Traceback" not in err and wall < TIME_S.get(name, TARGET_S) and peak < TARGET_MB
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name:12s} exit {rc}  {wall:6.2f} s  {peak:7.1f} MB  {notice[:100]}")
        if "Traceback" in err:
            print(err[-2000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
