"""Confusion matrix of the batching verdict on freshly simulated runs (truth from the simulator).

Usage::

    python bench/confusion.py --runs 400 --seeds 1000 2000   # seeds never used by the tests (<1000)

Each run draws a scenario (strategy x confounder x length x logging stride x batch stats) from a
generator seeded with ``seed``; the run itself is simulated with its own fresh seed. Sizes: short
(1.2-2.5k samples, a few hundred steps), medium, long, and 5% extra-long runs (200-400k samples,
50k-150k steps). Prints the
confusion matrix (rows: expected verdict, columns: verdict given), the accuracy, the must-not count
(sorted/static said of a healthy or confounded run), a reliability table of the confidence, and
the cases it got wrong.

By default each run is measured the way a user runs logdoctor: the simulated run is written as a text
log (config lines first, as fixtures/simlog.py writes them) and given to ``pipeline.analyze_one``, the
unit of work of ``logdoctor analyze`` (parsing, run structure, every detector, the diagnosis).
``--from-table`` builds the Run from the simulated table instead (no text parsing, the spike detector
only unless ``--with-detectors``): faster, and what the numbers before round 5 measured.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import itertools

from fixtures.simlog import write_text
from fixtures.simpipeline import FAULTS, HEALTHY
from fixtures.simulator import CONFOUNDERS, SimConfig, as_run, simulate
from logdoctor.config import AnalysisConfig
from logdoctor.detectors.spikes import SpikeDetector
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.model import BATCHING_LABELS, Verdict
from logdoctor.pipeline import analyze, analyze_one

#: verdicts that blame the batching pipeline
BLAME = ("sorted", "static", "grouped")


def draw(rng: np.random.Generator, seed: int) -> SimConfig:
    """One random scenario: a fault, or a healthy pipeline with or without one confounder."""
    fault = rng.random() < 0.4
    strategy = str(rng.choice(FAULTS if fault else HEALTHY))
    confounder = "none" if fault or rng.random() < 0.3 else str(rng.choice(CONFOUNDERS[1:]))
    size = str(rng.choice(["short", "medium", "long", "xlong"], p=[0.3, 0.45, 0.2, 0.05]))
    n_samples = {
        "short": int(rng.integers(1200, 2500)),
        "medium": int(rng.integers(4000, 12000)),
        "long": int(rng.integers(20000, 50000)),
        "xlong": int(rng.integers(200000, 400000)),  # 50k-150k steps
    }[size]
    return SimConfig(
        strategy=strategy,
        confounder=confounder,
        n_samples=n_samples,
        epochs=int(rng.integers(3, 6)) if size == "xlong" else int(rng.integers(3, 9)),
        length_effect=float(rng.uniform(0.1, 0.4)),
        noise=float(rng.uniform(0.02, 0.08)),
        log_every=1 if size == "short" or strategy == "megabatch" else int(rng.choice([1, 2, 5, 10])),
        batch_stats=(stats := strategy == "megabatch" or bool(rng.random() < 0.75)),
        batch_fp=stats and bool(rng.random() < 0.3),
        seed=seed,
    )


def reliability(conf: list[float], right: list[bool]) -> list[str]:
    """Rows of confidence bin, runs, mean confidence and observed accuracy."""
    edges = [0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0001]
    c, r = np.asarray(conf), np.asarray(right)
    rows = []
    for lo, hi in itertools.pairwise(edges):
        m = (c >= lo) & (c < hi)
        if m.any():
            rows.append(f"  [{lo:.2f}, {min(hi, 1):.2f})  {int(m.sum()):5d}  {c[m].mean():.3f}  {r[m].mean():.3f}")
    return rows


def _one(job: tuple[SimConfig, str, bool, bool]) -> tuple[dict[str, object], Verdict]:
    """Simulate one run and diagnose it (a process pool's unit of work)."""
    cfg, log, from_table, with_detectors = job
    table, truth = simulate(cfg)
    v = _from_table(table, with_detectors) if from_table else _as_users_run(Path(log), table, truth)
    return truth, v


def _as_users_run(path: Path, table: object, truth: dict[str, object]) -> Verdict:
    """The verdict ``logdoctor analyze`` gives the run written as a text log."""
    write_text(path, table, truth)  # type: ignore[arg-type]
    try:
        outcome = analyze_one(str(path), AnalysisConfig())
    finally:
        path.unlink()
        path.with_name(path.stem + ".truth.json").unlink(missing_ok=True)
    if outcome.report is None:
        raise RuntimeError(f"{path.name}: {outcome.error}")
    return outcome.report.verdict


def _from_table(table: object, with_detectors: bool) -> Verdict:
    run = as_run(table)  # type: ignore[arg-type]
    if with_detectors:
        return analyze(run).verdict
    # the spike detector only: the verdict names no spike the report lacks
    return BatchingDiagnosis().diagnose(run, SpikeDetector().analyze(run).findings).verdict


def main(argv: list[str] | None = None) -> int:
    """Simulate, diagnose and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300, help="runs per seed")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1000], help="scenario seeds (use >= 1000)")
    ap.add_argument(
        "--from-table",
        action="store_true",
        help="build the Run from the simulated table (no log written or parsed)",
    )
    ap.add_argument(
        "--with-detectors",
        action="store_true",
        help="with --from-table: run the registered detectors first (pipeline.analyze)",
    )
    ap.add_argument("--jobs", type=int, default=1, help="processes (runs are independent; results in draw order)")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="logdoctor-confusion-"))
    cfgs = []
    for seed in args.seeds:  # drawn in order, so the scenarios do not depend on --jobs
        rng = np.random.default_rng(seed)
        cfgs += [(draw(rng, seed * 100_000 + i), str(work / f"run{seed}_{i}.log")) for i in range(args.runs)]
    jobs = [(cfg, log, args.from_table, args.with_detectors) for cfg, log in cfgs]
    t0 = time.perf_counter()
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(_one, jobs, chunksize=4))
    else:
        results = [_one(job) for job in jobs]
    matrix: Counter[tuple[str, str]] = Counter()
    conf, right, wrong = [], [], []
    cause_hits: Counter[str] = Counter()
    must_not = 0
    for (cfg, _), (truth, v) in zip(cfgs, results, strict=True):
        exp = str(truth["expected_verdict"])
        matrix[(exp, v.batching)] += 1
        faulty = cfg.strategy in FAULTS and cfg.confounder == "none"
        must_not += int(v.batching in BLAME and not faulty)
        right.append(v.batching == exp)
        conf.append(v.confidence)  # None for an inconclusive verdict: left out of the reliability table
        if exp == "not_batching" and v.batching == exp:
            named = str(v.evidence.get("causes") or "").split(",")[0]
            cause_hits[str(named == truth["expected_cause"])] += 1
        if v.batching != exp:
            wrong.append(
                f"  {cfg.strategy}/{cfg.confounder} stats={cfg.batch_stats} fp={cfg.batch_fp} "
                f"k={cfg.log_every} n={cfg.n_samples} ep={cfg.epochs} seed={cfg.seed}: "
                f"expected {exp}, got {v.batching} ({v.cause})"
            )
    n = len(right)
    labels = BATCHING_LABELS
    how = "from the simulated table" if args.from_table else "as text logs through pipeline.analyze_one"
    print(f"{n} runs {how} in {time.perf_counter() - t0:.1f} s (seeds {args.seeds})\n")
    print("expected \\ given".ljust(16) + "".join(lab[:12].rjust(13) for lab in labels))
    for e in labels:
        print(e.ljust(16) + "".join(str(matrix[(e, g)]).rjust(13) for g in labels))
    print(
        f"\naccuracy {np.mean(right):.3f}; sorted/static/grouped said of a healthy pipeline or a "
        f"confounded run (the must-not): {must_not}; of any run expected otherwise: "
        f"{sum(matrix[(e, g)] for e in labels if e not in BLAME for g in BLAME)}"
    )
    n_named = cause_hits["True"] + cause_hits["False"]
    print(f"not_batching runs whose first-named cause is the simulated confounder: {cause_hits['True']}/{n_named}")
    print("\nconfidence bin   runs  mean conf  accuracy (decided verdicts; inconclusive has no confidence)")
    decided = [(c, r) for c, r in zip(conf, right, strict=True) if c is not None]
    print("\n".join(reliability([c for c, _ in decided], [r for _, r in decided])))
    if wrong:
        print("\nwrong:\n" + "\n".join(wrong[:40]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
