"""Tail-mode benchmarks: event latency, CPU while following a live writer, memory over long runs.

Usage (from the repository root)::

    python bench/bench_tail.py latency            # NaN / spike written -> event received
    python bench/bench_tail.py cpu --seconds 30   # follower CPU at 100 steps/s
    python bench/bench_tail.py memory --rows 4000000
    python bench/bench_tail.py sources --runs 10  # each live source: NaN written -> tail exits 1

The follower runs at the CLI defaults (inotify, 0.2 s update gap, heavy pass on its schedule). The
registry's cheap detectors are used; when the registry has no NaN or spike detector yet, small
bench-local ones stand in (the latency is that of the follow loop, not of the detector).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from logdoctor import codes  # noqa: E402
from logdoctor.detectors.base import Analyzer, Detection  # noqa: E402
from logdoctor.model import LOSS, STEP, Run  # noqa: E402
from logdoctor.tail.session import HeavyFn  # noqa: E402


class BenchNan(Analyzer):
    """LD001 at the first non-finite loss of the window."""

    name = "bench-nan"

    def analyze(self, run: Run) -> Detection:
        loss = run.table[LOSS].to_numpy()
        bad = np.flatnonzero(~np.isfinite(loss))
        if not len(bad):
            return Detection()
        step = int(run.table[STEP][int(bad[0])])
        return Detection((codes.finding("LD001", "nan", first_step=step, last_step=step),))


class BenchSpike(Analyzer):
    """LD101 where the loss is > 8 robust z above the window median."""

    name = "bench-spike"

    def analyze(self, run: Run) -> Detection:
        loss = run.table[LOSS].to_numpy()
        fin = np.isfinite(loss)
        if fin.sum() < 50:
            return Detection()
        med = np.median(loss[fin])
        mad = np.median(np.abs(loss[fin] - med)) or 1e-9
        hits = np.flatnonzero(np.where(fin, (loss - med) / (1.4826 * mad), 0) > 8)
        steps = run.table[STEP].to_numpy()
        return Detection(
            tuple(codes.finding("LD101", "spike", first_step=int(steps[k]), last_step=int(steps[k])) for k in hits)
        )


def line(step: int, loss: float) -> str:
    """A realistic text-log line with per-batch length statistics."""
    value = "nan" if math.isnan(loss) else f"{loss:.4f}"
    return (
        f"step {step}/100000000: loss={value} acc={0.5:.4f} lr=3e-4 grad_norm=1.02 | "
        f"batch: n_seq=12 tokens=7904 len_mean=658.7 len_min=12 len_max=1024 pad_frac=0.12\n"
    )


def cheap_and_heavy() -> tuple[list[Analyzer], HeavyFn]:
    """The registry's cheap detectors and heavy pass, with bench stand-ins for missing ones."""
    from logdoctor.tail.registry import default_detectors
    from logdoctor.tail.session import SessionOptions

    cheap, heavy = default_detectors(SessionOptions())
    have = {type(a).name for a in cheap}
    if not have & {"nonfinite", "nan"}:
        cheap.append(BenchNan())
    if not have & {"spikes", "spike"}:
        cheap.append(BenchSpike())
    return cheap, heavy


def follow_main(path: str, seconds: float, render: str = "jsonl") -> None:
    """The follower process: tail ``path`` at the defaults, events on stdout, CPU on stderr."""
    from logdoctor.tail.runner import TailOptions, follow
    from logdoctor.tail.views import stream_renderer

    opts = TailOptions((path,), max_seconds=seconds)
    cheap, heavy = cheap_and_heavy()
    t0 = time.process_time()
    follow(opts, stream_renderer(render), cheap=cheap, heavy=heavy)
    cpu = time.process_time() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"cpu_s": cpu, "maxrss_kib": rss}), file=sys.stderr)


def _spawn(path: Path, seconds: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "follow", str(path), "--seconds", str(seconds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


class Writer(threading.Thread):
    """Appends one step every 1/rate s; marks: step -> "nan" | "spike"; records write times."""

    def __init__(self, path: Path, rate: float, steps: int, marks: dict[int, str]) -> None:
        super().__init__(daemon=True)
        self.path, self.rate, self.steps, self.marks = path, rate, steps, marks
        self.written: dict[int, float] = {}

    def run(self) -> None:
        rng = random.Random(0)
        start = time.monotonic()
        with self.path.open("a") as fh:
            for s in range(1, self.steps + 1):
                loss = 3.0 - 1e-5 * s + rng.gauss(0, 0.01)
                kind = self.marks.get(s)
                loss = math.nan if kind == "nan" else loss + 3.0 if kind == "spike" else loss
                fh.write(line(s, loss))
                fh.flush()
                if kind:
                    self.written[s] = time.time()
                time.sleep(max(0.0, start + s / self.rate - time.monotonic()))


def latency(args: argparse.Namespace) -> None:
    """Write NaNs and spikes into a live log; print how long each took to become an event."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "train.log"
        log.write_text("")
        n = int(args.seconds * args.rate)
        rng = random.Random(1)  # irregular marks: the follower's update phase must not lock in
        starts = [s + rng.randrange(0, 200) for s in range(300, n - 200, 400)]
        marks = {s: ("nan" if i % 2 else "spike") for i, s in enumerate(starts)}
        proc = _spawn(log, args.seconds + 3)
        assert proc.stdout is not None
        proc.stdout.readline()  # start event: following
        writer = Writer(log, args.rate, n, marks)
        writer.start()
        got: dict[int, float] = {}
        for raw in proc.stdout:
            ev = json.loads(raw)
            if ev["event"] == "finding" and ev["finding"]["first_step"] in marks:
                got.setdefault(ev["finding"]["first_step"], time.time())
        writer.join()
        proc.wait()
        delays = sorted(got[s] - writer.written[s] for s in got if s in writer.written)
        kinds = {
            k: sorted(round(got[s] - writer.written[s], 3) for s in got if s in writer.written and marks[s] == k)
            for k in ("nan", "spike")
        }
        print(
            json.dumps(
                {
                    "marks": len(marks),
                    "reported": len(delays),
                    "by_kind_s": kinds,
                    "latency_median_s": round(float(np.median(delays)), 3) if delays else None,
                    "latency_max_s": round(max(delays), 3) if delays else None,
                }
            )
        )


def cpu(args: argparse.Namespace) -> None:
    """Follow ``files`` writers at ``rate`` steps/s each for ``seconds``; print the follower's CPU
    share (one file: ``train.log``; several: ``rank*.log`` through a glob, as for a multi-GPU run)."""
    with tempfile.TemporaryDirectory() as tmp:
        logs = [Path(tmp) / (f"rank{i}.log" if args.files > 1 else "train.log") for i in range(args.files)]
        for log in logs:
            log.write_text("")
        proc = _spawn(Path(tmp) / "rank*.log" if args.files > 1 else logs[0], args.seconds)
        assert proc.stdout is not None
        proc.stdout.readline()
        for log in logs:
            Writer(log, args.rate, int(args.seconds * args.rate) + 1000, {}).start()
        _, err = proc.communicate()
        stats = json.loads(err.strip().splitlines()[-1])
        print(
            json.dumps(
                {
                    "seconds": args.seconds,
                    "rate": args.rate,
                    "files": args.files,
                    "cpu_s": round(stats["cpu_s"], 3),
                    "cpu_share_of_one_core": round(stats["cpu_s"] / args.seconds, 4),
                    "maxrss_mib": round(stats["maxrss_kib"] / 1024, 1),
                }
            )
        )


def _rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def memory(args: argparse.Namespace) -> None:
    """Feed ``rows`` steps through one session in 1000-line chunks; print RSS as it grows."""
    from logdoctor.tail.session import TailSession

    session = TailSession("bench.log", cheap_and_heavy()[0], None)
    rng = np.random.default_rng(0)
    chunk, report_at, t0 = 1000, args.rows // 8, time.perf_counter()
    for start in range(1, args.rows + 1, chunk):
        loss = 3.0 + rng.normal(0, 0.01, chunk)
        data = "".join(line(start + i, float(v)) for i, v in enumerate(loss)).encode()
        session.feed(data)
        done = start + chunk - 1
        if done % report_at < chunk:
            h = session.history
            print(
                json.dumps(
                    {
                        "rows": done,
                        "rss_mib": round(_rss_mib(), 1),
                        "full_rows": h.n_full,
                        "summary_blocks": h.summary.height,
                        "block": h.block,
                        "rows_per_s": round(done / (time.perf_counter() - t0)),
                    }
                ),
                flush=True,
            )


def sources(args: argparse.Namespace) -> None:
    """Per live source (tests/frameworks/livewriters.py: the real trainers' own writers and the
    hand-written formats), the seconds from the write that brings a NaN to the exit of
    ``logdoctor tail --exit-on error`` (a CLI process, as a user runs it): median of ``runs``."""
    import statistics

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.frameworks.livewriters import KINDS, follow

    for kind in args.kinds or KINDS:
        lat: list[float] = []
        codes: list[int] = []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                o = follow(kind, Path(tmp), nan=True)
            codes.append(o.code)
            lat.append(o.latency if o.latency is not None else math.inf)
        print(
            json.dumps(
                {
                    "source": kind,
                    "runs": args.runs,
                    "exit_1": codes.count(1),
                    "median_s": round(statistics.median(lat), 3),
                    "max_s": round(max(lat), 3),
                }
            ),
            flush=True,
        )


def main() -> None:
    """Pick a benchmark from the command line."""
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, secs in (("latency", 20.0), ("cpu", 30.0)):
        p = sub.add_parser(name)
        p.add_argument("--seconds", type=float, default=secs)
        p.add_argument("--rate", type=float, default=100.0)
        p.add_argument("--files", type=int, default=1, help="writers, one rank file each")
    p = sub.add_parser("memory")
    p.add_argument("--rows", type=int, default=4_000_000)
    p = sub.add_parser("follow")
    p.add_argument("path")
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--render", default="jsonl", help="jsonl, plain, live or auto")
    p = sub.add_parser("sources")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("kinds", nargs="*")
    args = ap.parse_args()
    if args.cmd == "sources":
        sources(args)
    elif args.cmd == "follow":
        follow_main(args.path, args.seconds, args.render)
    else:
        {"latency": latency, "cpu": cpu, "memory": memory}[args.cmd](args)


if __name__ == "__main__":
    main()
