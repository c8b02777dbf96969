"""LD201's p-values against their stated nulls, its false alarms and its power (bench/RESULTS.md quotes them).

Nulls, 400 steps each: white noise on a flat loss; a decaying loss with ADDITIVE white noise (its
variance in log space drifts over the run); AR(1) phi = 0.5 noise in log space on a decaying loss.
(1) The top band's p-value from spectral.peak_tests: P(p < a) must be <= a within Monte Carlo error;
beside it the Gamma(2h+1) band test as it stood before (median background of 31 bins / ln 2,
Gamma tail, Bonferroni), recomputed here. (2) The whole detector (acf checks included): LD201
findings on the nulls, and power on a jittered 40-step sawtooth of amplitude 0.05 / 0.08.
(3) The time of one peak_tests call. Run:

    python bench/ld201_null.py [--seeds 4000] [--runs 1000] [--power 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from logdoctor.detectors import robust
from logdoctor.detectors.periodicity import PeriodicityDetector, detrend
from logdoctor.detectors.spectral import BG_FRACTION, Spectrum, peak_tests, spectrum
from logdoctor.stats.distributions import gamma_logsf
from tests.unit.synth import make_run, sawtooth

LEVELS = (0.001, 0.01, 0.05, 0.1)
N = 400


def null_loss(kind: str, seed: int, n: int = N) -> np.ndarray:
    """One healthy run of the named null."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    if kind == "white":
        return 2 + rng.normal(0, 0.05, n)
    if kind == "ar(0.5)":
        e, x = rng.normal(0, 0.05, n), np.zeros(n)
        for i in range(n):
            x[i] = (0.5 * x[i - 1] if i else 0.0) + e[i]
        return (2 + 3 * np.exp(-t / 100)) * np.exp(x)
    tau, floor = rng.uniform(30, 300), rng.uniform(0.3, 3)
    start, sig = floor * rng.uniform(2, 8), rng.uniform(0.02, 0.2) * floor
    return np.clip(floor + (start - floor) * np.exp(-t / tau) + rng.normal(0, sig, n), 1e-3, None)


def gamma_band_p(sp: Spectrum, span: float, bg_window: int = 31, band_frac: float = 0.02) -> float:
    """The top band's p-value as the Gamma(2h+1) test gave it (min_power_ratio 0.02, 3 cycles, 4 steps)."""
    w = max(bg_window, int(BG_FRACTION * sp.freq.size) | 1)
    bg = robust.rolling_median(sp.power, w, mode="mirror") / np.log(2.0)
    k = np.arange(sp.freq.size)
    h = np.clip(np.round(band_frac * sp.freq * span), 1, max(1, w // 8)).astype(np.int64)
    lo, hi = np.clip(k - h, 0, k.size), np.clip(k + h + 1, 0, k.size)
    cand = (sp.freq[lo] * span >= 3.0) & (1.0 / sp.freq >= max(4.0, 2 * sp.dt))
    n_tests = int(cand.sum())
    c = np.concatenate(([0.0], np.cumsum(sp.power / np.where(bg > 0, bg, np.inf))))
    pc = np.concatenate(([0.0], np.cumsum(sp.power)))
    cand &= (pc[hi] - pc[lo]) / pc[-1] >= 0.02
    if not cand.any():
        return 1.0
    logp = gamma_logsf((c[hi] - c[lo])[cand], (hi - lo)[cand].astype(np.float64))
    return float(min(1.0, np.exp(logp.min()) * n_tests))


def top_band_p(loss: np.ndarray) -> tuple[float, float]:
    """(peak_tests' top p, the Gamma(2h+1) test's top p) for one loss curve."""
    s = robust.series(make_run(loss), "loss")
    st = s.steps.astype(np.float64)
    sp = spectrum(st, detrend(s))
    span = float(st[-1] - st[0] + sp.dt)
    pk = peak_tests(sp, span, min_power_ratio=0.02)
    return (pk[0].p_value if pk else 1.0), gamma_band_p(sp, span)


def calibration(seeds: int) -> None:
    print(f"(1) top band: P(p < a) over {seeds} seeds, {N} steps (MC sd at a = 0.001: {np.sqrt(1e-3 / seeds):.4f})")
    print(f"    {'null':9s} {'test':11s} " + " ".join(f"{a:>8g}" for a in LEVELS))
    for kind in ("white", "decay", "ar(0.5)"):
        ps = np.array([top_band_p(null_loss(kind, s)) for s in range(seeds)])
        for j, name in enumerate(("peak_tests", "Gamma(2h+1)")):
            rates = " ".join(f"{np.mean(ps[:, j] < a):8.4f}" for a in LEVELS)
            print(f"    {kind:9s} {name:11s} {rates}")


def detector(runs: int, power: int) -> None:
    det = PeriodicityDetector()
    hits = {
        k: sum(bool(det.analyze(make_run(null_loss(k, s))).findings) for s in range(runs))
        for k in ("white", "decay", "ar(0.5)")
    }
    print(f"(2) LD201 findings on {runs} null runs each (alpha {det.alpha}): {hits}")
    for amp in (0.05, 0.08):
        found = sum(
            bool(det.analyze(make_run(sawtooth(N, s, period=40, amp=amp, jitter=2)[0])).findings) for s in range(power)
        )
        print(f"    power, 40-step sawtooth (jitter 2) amplitude {amp}: {found}/{power}")


def timing(fn: Callable[[], object], reps: int) -> float:
    fn()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return 1e3 * (time.perf_counter() - t) / reps


def speed() -> None:
    parts = []
    for n in (400, 10_000, 1_000_000):
        st = np.arange(n, dtype=np.float64)
        x = np.random.default_rng(0).normal(size=n) * (1 + 3 * np.exp(-st / (n / 5))) + 0.3 * np.sin(st / 7)
        sp = spectrum(st, x)
        parts.append(f"{n}: {timing(lambda sp=sp, n=n: peak_tests(sp, float(n)), 20 if n < 10**5 else 3):.1f} ms")
    print("(3) one peak_tests call: " + ", ".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=4000)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--power", type=int, default=200)
    args = ap.parse_args()
    calibration(args.seeds)
    detector(args.runs, args.power)
    speed()


if __name__ == "__main__":
    main()
