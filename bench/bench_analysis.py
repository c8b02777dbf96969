"""Benchmark the analysis stages: changepoints vs ruptures, the spectral stage, all detectors.

Run from the repository root: ``python bench/bench_analysis.py [--quick]``. Prints tables; every
input is seeded. Exact pure-Python PELT (jump=1) runs up to 5k points only (~35 s there on
2 cores); ``--quick`` also skips the 20k-point comparison (~2 minutes of ruptures PELT).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import ruptures as rpt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from logdoctor.detectors import ANALYZERS
from logdoctor.detectors.cpsearch import fast_breakpoints
from logdoctor.detectors.periodicity import PeriodicityDetector
from logdoctor.model import Run, RunMeta, validate_run


def timed(fn: Callable[[], object], repeat: int = 1) -> tuple[float, object]:
    """Best wall time of ``repeat`` calls and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _exhaustive(kind: str, y: np.ndarray, pen: float, q: mp.Queue) -> None:
    algos = {
        "pelt1": rpt.Pelt(model="l2", min_size=2, jump=1),  # exact optimum, pure Python
        "pelt5": rpt.Pelt(model="l2"),  # ruptures defaults (jump=5): the "~40 s at 20k"
        "kcpd": rpt.KernelCPD(kernel="linear", min_size=2, jump=1),  # same exact optimum, in C
    }
    t0 = time.perf_counter()
    bk = algos[kind].fit(y.reshape(-1, 1)).predict(pen=pen)
    q.put((time.perf_counter() - t0, [int(b) for b in bk]))


def capped(kind: str, y: np.ndarray, pen: float, cap_s: float) -> tuple[float | None, list[int] | None]:
    """Run an exhaustive ruptures search in a child process, giving up after ``cap_s`` seconds."""
    q: mp.Queue = mp.Queue()
    p = mp.Process(target=_exhaustive, args=(kind, y, pen, q))
    p.start()
    p.join(cap_s)
    if p.is_alive():
        p.terminate()
        p.join()
        return None, None
    return q.get()


def agree(a: list[int] | None, b: list[int], tol: int = 3) -> bool | None:
    """Same number of breakpoints, each within ``tol`` steps (None when ``a`` did not finish)."""
    if a is None:
        return None
    return len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b, strict=True)) <= tol


def bench_changepoints(sizes: list[int], cap_s: float) -> None:
    print("\n## (a) changepoint search: fast block+refine vs exhaustive ruptures (L2, same penalty)")
    print(
        "| n | fast s | Pelt exact (jump=1) s | Pelt default (jump=5) s | KernelCPD linear s "
        "| Pelt5/fast | agrees with exact (<=3) | true | fast | exact |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    fmt = lambda t: f"{t:.3f}" if t is not None else f">{cap_s:.0f} (capped)"  # noqa: E731
    for n in sizes:
        sig, truth = rpt.pw_constant(n, 1, 5, noise_std=1.0, seed=n)
        y = sig[:, 0]
        pen = 3.0 * np.log(n)
        t_fast, fast = timed(lambda y=y, pen=pen: fast_breakpoints(y, pen), repeat=3)
        t_p1, p1 = capped("pelt1", y, pen, cap_s) if n <= 5000 else (None, None)
        t_p5, _ = capped("pelt5", y, pen, cap_s)
        t_k, kcpd = capped("kcpd", y, pen, cap_s)
        exact = p1 or kcpd
        ratio = f"{t_p5 / t_fast:.0f}x" if t_p5 else f">{cap_s / t_fast:.0f}x"
        print(
            f"| {n} | {t_fast:.4f} | {fmt(t_p1)} | {fmt(t_p5)} | {fmt(t_k)} | {ratio} "
            f"| {agree(exact, fast)} | {truth} | {fast} | {exact} |"
        )


def synthetic_run(n: int, seed: int = 0) -> Run:
    """A run with decaying loss, a 1000-step sawtooth, spikes, an lr drop, grad norm and acc."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    loss = (2 + 8 * np.exp(-t / (n / 20))) * np.exp(0.05 * ((t % 1000) / 1000) + rng.normal(0, 0.05, n))
    loss[int(0.7 * n) :] *= 0.85
    loss[rng.choice(n, max(3, n // 20_000), replace=False)] *= 3
    grad = np.exp(rng.normal(0, 0.1, n))
    acc = np.clip(0.7 * (1 - np.exp(-t / (n / 10))) + rng.normal(0, 0.02, n), 0, 1)
    df = pl.DataFrame({"step": t + 1, "loss": loss, "line_no": t + 1, "grad_norm": grad, "acc": acc})
    return Run(validate_run(df), RunMeta(path="bench", format="synthetic", steps_per_epoch=1000))


def bench_spectral(sizes: list[int]) -> None:
    print("\n## (b) spectral stage (PeriodicityDetector.analyze)")
    print("| n | s | period found | p-value |")
    print("|---|---|---|---|")
    for n in sizes:
        run = synthetic_run(n)
        t, det = timed(lambda run=run: PeriodicityDetector().analyze(run), repeat=3)
        ev = det.findings[0].evidence if det.findings else {}  # type: ignore[attr-defined]
        print(f"| {n} | {t:.3f} | {ev.get('period')} | {ev.get('p_value')} |")


def bench_all(sizes: list[int]) -> None:
    print("\n## (c) all detectors (analyzers.ANALYZERS) on one run")
    print("| n | total s | per detector s | findings |")
    print("|---|---|---|---|")
    base = None
    for n in sizes:
        run = synthetic_run(n)
        per, found = {}, []
        for cls in ANALYZERS:
            t, det = timed(lambda cls=cls, run=run: cls().analyze(run), repeat=1 if n >= 1_000_000 else 3)
            per[cls.name] = t
            found += [f.code for f in det.findings]  # type: ignore[attr-defined]
        total = sum(per.values())
        base = base or total
        detail = ", ".join(f"{k} {v:.3f}" for k, v in per.items())
        print(f"| {n} | {total:.3f} ({total / base:.0f}x) | {detail} | {sorted(set(found))} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="changepoints at 1k and 5k points only")
    ap.add_argument("--cap", type=float, default=120.0, help="seconds allowed to each exhaustive search")
    args = ap.parse_args()
    print(f"# logdoctor analysis benchmark ({os.cpu_count()} cores, python {sys.version.split()[0]})")
    bench_changepoints([1000, 5000] if args.quick else [1000, 5000, 20000], args.cap)
    bench_spectral([10_000, 100_000, 1_000_000])
    bench_all([10_000, 100_000, 1_000_000])


if __name__ == "__main__":
    main()
