"""What bench/run.py runs inside each measured process: one stage, or a command under rusage.

``python bench/child.py --stage KIND ARG`` times one stage in-process (imports excluded) and prints
JSON; ``python bench/child.py --rusage -- CMD...`` runs CMD as its only child and prints its wall,
CPU and peak RSS (``RUSAGE_CHILDREN`` of this fresh process is CMD's own).
"""

from __future__ import annotations

import dataclasses
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from bench_ingest import re_loop  # noqa: E402

#: The canonical text line as a notebook user would extract it with pandas.
TEXT_RE = (
    r"^step (\d+)/\d+ \| loss=(\S+) acc=(\S+) lr=(\S+) grad_norm=(\S+) tok/s=(\S+) epoch=(\S+) \| "
    r"batch: n_seq=(\S+) tokens=(\S+) len_mean=(\S+) len_min=(\S+) len_max=(\S+) pad_frac=(\S+)"
)


def stage(kind: str, arg: str) -> dict[str, float]:
    """Run one stage in this process; return its own wall/CPU (imports excluded) and a check value."""
    if kind == "re-loop":
        fn = lambda: re_loop(Path(arg))  # noqa: E731
    elif kind == "pandas":
        fn = lambda: pandas_ingest(Path(arg))  # noqa: E731
    elif kind == "ingest":
        from logdoctor import pipeline

        fn = lambda: pipeline.load(arg).n_steps  # noqa: E731
    elif kind == "analysis":
        from logdoctor import pipeline

        run = pipeline.load(arg)
        # first-use imports (scipy, ruptures) are a constant, not analysis cost: pay them first
        pipeline.analyze(dataclasses.replace(run, table=run.table.head(3000)))
        fn = lambda: len(pipeline.analyze(run).findings)  # noqa: E731
    else:  # changepoints:N / spectral:N on bench_analysis.synthetic_run
        from bench_analysis import synthetic_run

        from logdoctor.detectors.changepoints import ChangepointDetector
        from logdoctor.detectors.periodicity import PeriodicityDetector

        det = ChangepointDetector() if kind == "changepoints" else PeriodicityDetector()
        run = synthetic_run(int(arg))
        fn = lambda: len(det.analyze(run).findings)  # noqa: E731
    w, c = time.perf_counter(), time.process_time()
    value = fn()
    return {"stage_wall": time.perf_counter() - w, "stage_cpu": time.process_time() - c, "value": value}


def pandas_ingest(path: Path) -> int:
    """What a notebook does with pandas: read lines, ``str.extract`` the step lines, to floats."""
    import pandas as pd

    if path.suffix == ".jsonl":
        return len(pd.read_json(path, lines=True))
    if path.suffix == ".csv":
        return len(pd.read_csv(path))
    lines = pd.Series(path.read_text(encoding="utf-8", errors="replace").splitlines())
    return len(lines.str.extract(TEXT_RE).dropna().astype(float))


def rusage_of(cmd: list[str]) -> dict[str, float]:
    """(In the intermediate process) run ``cmd``; its wall, CPU, peak RSS and last JSON line."""
    w = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - w
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    out: dict[str, float] = {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024}
    if res.returncode not in (0, 1):
        out["error"] = res.returncode
    last = res.stdout.strip().splitlines()[-1:] if res.stdout.strip() else []
    if last and last[0].startswith("{") and "stage_wall" in last[0]:
        out.update(json.loads(last[0]))
    return out


def main() -> int:
    """``--stage KIND ARG`` or ``--rusage -- CMD...``; prints one JSON line."""
    args = sys.argv[1:]
    if args[:1] == ["--stage"] and len(args) == 3:
        print(json.dumps(stage(args[1], args[2])))
    elif args[:2] == ["--rusage", "--"]:
        print(json.dumps(rusage_of(args[2:])))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
