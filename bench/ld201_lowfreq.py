"""LD201 at low frequencies: short runs (200-800 steps) over 4-10 epochs, nulls and power per detrend.

Signals: a decaying loss (exponential, power law, or warm-up then decay) in log space plus white
noise (sd ``--noise``), times exp(amp * in-epoch phase): a sawtooth whose epochs are ``n / cycles``
steps long, each jittered by up to +-max(2, 3% of it) steps (token-budget batching). Nulls: the same
trends without the sawtooth, and bench/ld201_null.py's three (white, decay + additive noise, AR(0.5)).
For each detrend (``--detrends``: "median", the default; "logspline", trend_dof = 8; fitted variants) it prints
(1) the detrended nulls' mean periodogram by bin index over the median of the ordinates beyond
bin 20 (the low-bin excess), (2) P(top band p < 0.001) and LD201 findings on each null at each length,
(3) LD201's power on the sawtooth per cycles x length x trend. Run:

    python bench/ld201_lowfreq.py [--nulls 500] [--power 200] [--detrends median ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ld201_null import null_loss

from logdoctor.detectors import periodicity, robust
from logdoctor.detectors.robust import FloatArray, Series
from logdoctor.detectors.spectral import peak_tests, spectrum
from tests.unit.synth import make_run

SHIPPED = periodicity.detrend
LENGTHS = [200, 400, 800]
CYCLES = [4, 6, 8, 10]
TRENDS = ("exp", "power", "warmup")


def median_detrend(s: Series, window_frac: float = 1.0, dof: int = 0) -> FloatArray:
    """The default detrend: log values minus a rolling median over the whole run (robust.trend)."""
    return SHIPPED(s, 1.0, 0)


def logspline_detrend(s: Series, window_frac: float = 1.0, dof: int = 0) -> FloatArray:
    """periodicity.detrend with trend_dof = 8: logtrend's robust spline in log-steps."""
    return SHIPPED(s, 1.0, 8)


def trend_curve(kind: str, n: int, rng: np.random.Generator) -> FloatArray:
    """A healthy log-loss trend over ``n`` steps (random shape parameters)."""
    t = np.arange(n, dtype=np.float64)
    floor = rng.uniform(0.5, 3.0)
    start = floor * rng.uniform(2, 6)
    if kind == "exp":
        return np.log(floor + (start - floor) * np.exp(-t / (rng.uniform(0.05, 0.5) * n)))
    if kind == "power":
        t0 = rng.uniform(2, 0.1 * n)
        return np.log(floor + (start - floor) * (t0 / (t + t0)) ** rng.uniform(0.5, 2.0))
    warm = int(rng.uniform(0.03, 0.15) * n)
    lr = np.where(t < warm, (t + 1) / warm, 0.5 * (1 + np.cos(np.pi * (t - warm) / max(1, n - warm))))
    progress = np.cumsum(lr) / np.sum(lr)
    return np.log(floor + (start - floor) * np.exp(-rng.uniform(2, 6) * progress))


def sawtooth_phase(n: int, cycles: int, rng: np.random.Generator) -> FloatArray:
    """In-epoch phase 0..1 of epochs of ~n/cycles steps, each jittered (token-budget batching)."""
    ep = n / cycles
    j = max(2, round(0.03 * ep))
    lens = np.maximum(2, np.round(ep + rng.integers(-j, j + 1, cycles + 3))).astype(int)
    return np.concatenate([np.arange(k) / k for k in lens])[:n]


def signal_loss(kind: str, n: int, cycles: int, amp: float, noise: float, seed: int) -> FloatArray:
    """One run: trend + sawtooth (amp in log units, peak to peak) + white noise, as a loss."""
    rng = np.random.default_rng(seed)
    y = trend_curve(kind, n, rng) + rng.normal(0, noise, n)
    if cycles:
        y = y + amp * sawtooth_phase(n, cycles, rng)
    return np.exp(y)


def nulls(n: int, seed: int, noise: float) -> dict[str, FloatArray]:
    """Every null at length ``n`` for one seed."""
    out = {k: null_loss(k, seed, n) for k in ("white", "decay", "ar(0.5)")}
    out.update({k: signal_loss(k, n, 0, 0.0, noise, seed + 7_000_000) for k in TRENDS})
    return out


def top_p(loss: FloatArray) -> float:
    """The top band's p-value with the detector's settings (the detrend currently installed)."""
    s = robust.series(make_run(loss), "loss")
    st = s.steps.astype(np.float64)
    sp = spectrum(st, periodicity.detrend(s))
    pk = peak_tests(sp, float(st[-1] - st[0] + sp.dt), min_power_ratio=0.02)
    return pk[0].p_value if pk else 1.0


def low_bins(runs: int, noise: float) -> None:
    print("(1) detrended nulls: mean periodogram at bin k / median ordinate beyond bin 20")
    for n in LENGTHS:
        acc: dict[str, np.ndarray] = {}
        for seed in range(runs):
            for kind, loss in nulls(n, seed, noise).items():
                s = robust.series(make_run(loss), "loss")
                p = spectrum(s.steps.astype(np.float64), periodicity.detrend(s)).power
                acc[kind] = acc.get(kind, 0) + p[:12] / np.median(p[20:])
        for kind, a in acc.items():
            print(f"    n={n:4d} {kind:8s} k=1..12: " + " ".join(f"{v / runs:5.2f}" for v in a))


def null_rates(runs: int, noise: float) -> None:
    det = periodicity.PeriodicityDetector()
    print(f"(2) nulls, {runs} runs each: P(top p < 0.001) x1000 / LD201 findings per 1000")
    for n in LENGTHS:
        ps: dict[str, list[float]] = {}
        hits: dict[str, int] = {}
        for seed in range(runs):
            for kind, loss in nulls(n, seed, noise).items():
                ps.setdefault(kind, []).append(top_p(loss))
                hits[kind] = hits.get(kind, 0) + bool(det.analyze(make_run(loss)).findings)
        cells = [f"{k} {1000 * np.mean(np.array(v) < 1e-3):.1f}/{1000 * hits[k] / runs:.1f}" for k, v in ps.items()]
        print(f"    n={n:4d}: " + ", ".join(cells))


def power(runs: int, amps: tuple[float, ...], noise: float) -> None:
    det = periodicity.PeriodicityDetector()
    print(f"(3) power, {runs} runs per cell (found / runs; period within 15% of the epoch), noise sd {noise}")
    for amp in amps:
        for n in LENGTHS:
            row = []
            for cyc in CYCLES:
                hit = 0
                for kind in TRENDS:
                    for seed in range(runs // len(TRENDS)):
                        f = det.analyze(make_run(signal_loss(kind, n, cyc, amp, noise, seed))).findings
                        hit += bool(f) and abs(f[0].evidence["period"] * cyc / n - 1) < 0.15
                row.append(f"{cyc}c {hit:3d}")
            print(f"    amp {amp} n={n:4d}: " + "  ".join(row))


# -- candidate detrends (installed into periodicity.detrend for the measurement) --------------


def _design(u: FloatArray, dof: int) -> FloatArray:
    """Natural cubic regression spline basis in ``u`` (0..1) with ``dof`` columns (intercept included),
    knots equally spaced in ``u``."""
    if dof <= 2:
        return np.vander(u, dof, increasing=True)
    knots = np.linspace(0.0, 1.0, dof)
    kl, km = knots[-1], knots[-2]

    def d(k: float) -> FloatArray:
        return (np.maximum(u - k, 0) ** 3 - np.maximum(u - kl, 0) ** 3) / (kl - k)

    cols = [np.ones_like(u), u] + [d(k) - d(km) for k in knots[:-2]]
    return np.column_stack(cols)


def _fit(y: FloatArray, x: FloatArray, huber: bool) -> FloatArray:
    w = np.ones_like(y)
    beta = np.linalg.lstsq(x, y, rcond=None)[0]
    for _ in range(8 if huber else 0):
        r = y - x @ beta
        sig = 1.4826 * np.median(np.abs(r - np.median(r))) or 1.0
        w = np.minimum(1.0, 1.345 * sig / np.maximum(np.abs(r), 1e-300))
        sw = np.sqrt(w)
        beta = np.linalg.lstsq(x * sw[:, None], y * sw, rcond=None)[0]
    return np.asarray(x @ beta, dtype=np.float64)


def _warp(s: Series, offset: float) -> FloatArray:
    """Steps from the first, as log(1 + t / (offset x span)) scaled to [0, 1] (offset 0: linear)."""
    t = (s.steps - s.steps[0]).astype(np.float64)
    u = np.log1p(t / max(1.0, offset * t[-1])) if offset > 0 else t
    return (u - u[0]) / max(u[-1] - u[0], 1e-12)


def fitted_detrend(basis: str, dof: int, offset: float, huber: bool) -> Callable[..., FloatArray]:
    def fn(s: Series, window_frac: float = 1.0, trend_dof: int = 0) -> FloatArray:
        y, u = s.transformed(), _warp(s, offset)
        x = _design(u, dof) if basis == "spline" else np.polynomial.legendre.legvander(2 * u - 1, dof - 1)
        return y - _fit(y, x, huber)

    return fn


def variant(name: str) -> Callable[..., FloatArray]:
    """median (the default) | logspline (trend_dof = 8) | spline:DOF[:OFFSET][:h] | poly:DOF[:OFFSET][:h]
    (OFFSET of the log warp, default 0.01; 0 = linear steps; h = Huber IRLS: bench-only variants)."""
    if name == "median":
        return median_detrend
    if name == "logspline":
        return logspline_detrend
    parts = name.split(":")
    huber = parts[-1] == "h"
    nums = [float(v) for v in parts[1:] if v != "h"]
    if parts[0] not in ("spline", "poly"):
        raise SystemExit(f"unknown detrend {name}")
    return fitted_detrend(parts[0], int(nums[0]), nums[1] if len(nums) > 1 else 0.01, huber)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nulls", type=int, default=500)
    ap.add_argument("--power", type=int, default=198)
    ap.add_argument("--spectra", type=int, default=200)
    ap.add_argument("--noise", type=float, default=0.03)
    ap.add_argument("--amps", type=float, nargs="+", default=[0.05, 0.1])
    ap.add_argument("--detrends", nargs="+", default=["median", "logspline"])
    ap.add_argument("--parts", default="123")
    ap.add_argument("--lengths", type=int, nargs="+", default=LENGTHS[:])
    ap.add_argument("--cycles", type=int, nargs="+", default=CYCLES[:])
    args = ap.parse_args()
    LENGTHS[:], CYCLES[:] = args.lengths, args.cycles
    for name in args.detrends:
        periodicity.detrend = variant(name)  # type: ignore[assignment]
        t0 = time.process_time()
        print(f"== detrend {name}")
        if "1" in args.parts:
            low_bins(args.spectra, args.noise)
        if "2" in args.parts:
            null_rates(args.nulls, args.noise)
        if "3" in args.parts:
            power(args.power, tuple(args.amps), args.noise)
        print(f"   ({time.process_time() - t0:.0f} CPU-s)", flush=True)


if __name__ == "__main__":
    main()
