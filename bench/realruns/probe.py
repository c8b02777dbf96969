"""Probe the samplers of the real training runs and compare with ``analyze`` on their logs.

Usage::

    python bench/realruns/probe.py                 # every pipeline of train.py's RUNS
    python bench/realruns/probe.py --only loop_static_stats hf_gbl_stats

For each run, the sampler its training used is built again as train.py built it (bench/realruns/data.py's
``Sampler`` for the plain loops, the same ``transformers.Trainer`` for the HF runs, the shuffling DataLoader
for Lightning) and walked by ``logdoctor.probe`` for the run's epochs, before any training; the log of its
real training (fixtures/realruns) is analysed as ``logdoctor analyze`` analyses it. The strategy's verdict
(random and bucketed: healthy; sorted; static and fixed: static; group_by_length: grouped) is what the probe
must say; where the log carries per-step batch statistics, ``analyze`` must say the same.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.realruns.data import Sampler, corpus
from bench.realruns.train import OUT, RUNS, Spec
from logdoctor import pipeline
from logdoctor.model import Report
from logdoctor.probing import probe

#: The verdict each sampler strategy must get from a probe (the walk sees every batch of every epoch).
STRATEGY_VERDICT = {
    "random": "healthy",
    "bucketed": "healthy",
    "sorted": "sorted",
    "static": "static",
    "fixed": "static",
    "group_by_length": "grouped",
}


def pipeline_of(spec: Spec, seqs: list[np.ndarray], tmp: str, seed: int = 0) -> Any:
    """What the run trained from, built again as train.py builds it (nothing trained)."""
    if spec.kind == "loop":
        return Sampler(spec.strategy, np.array([s.size for s in seqs]), spec.batch, seed)
    if spec.kind == "hf":
        from transformers import Trainer

        from bench.realruns.frameworks import _drop_idx, hf_args, hf_data, hf_model

        return Trainer(
            model=hf_model(seed),
            args=hf_args(spec, seed, tmp),
            train_dataset=hf_data(seqs),  # type: ignore[arg-type]
            data_collator=_drop_idx,
        )
    import torch

    torch.manual_seed(seed)
    return torch.utils.data.DataLoader(seqs, batch_size=spec.batch, shuffle=True)  # type: ignore[arg-type]


def probe_run(name: str, spec: Spec, seed: int = 0) -> tuple[Report, float]:
    """(the probe's report on the run's sampler, seconds it took)."""
    seqs = corpus(spec.samples, seed=1)
    lengths = np.array([s.size for s in seqs]) if spec.kind == "loop" else None
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        target = pipeline_of(spec, seqs, tmp, seed)
        t0 = time.perf_counter()
        accum = spec.accum if spec.kind == "loop" else None  # the Trainer states its own
        report = probe(target, lengths=lengths, epochs=spec.epochs, grad_accum=accum)
    return report, time.perf_counter() - t0


def compare(name: str, root: Path = OUT) -> dict[str, Any]:
    """The probe's verdict and the log's on one run, with what the probe must say."""
    spec = RUNS[name]
    report, seconds = probe_run(name, spec)
    truth = json.loads((root / f"{name}.truth.json").read_text(encoding="utf-8"))
    logged = pipeline.analyze(pipeline.load(str(root / f"{name}.log"))).verdict.batching
    dense = spec.stats and spec.every == 1
    return {
        "name": name,
        "probe": report.verdict.batching,
        "want": STRATEGY_VERDICT[spec.strategy],
        "log": logged,
        "log_truth": truth["expected_verdict"],
        "dense_stats": dense,
        "seconds": round(seconds, 2),
        "efficiency": report.sampler.efficiency if report.sampler else None,
    }


def main(argv: list[str] | None = None) -> int:
    """Probe the selected runs (all by default); exit 1 when a probe or an agreement is wrong."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted(RUNS), help="runs to probe")
    args = ap.parse_args(argv)
    logging.getLogger("transformers").setLevel(logging.ERROR)
    bad = 0
    print("| run | probe | must say | analyze (log) | agree |\n|---|---|---|---|---|")
    for name in args.only or RUNS:
        r = compare(name)
        agree = r["probe"] == r["log"] if r["dense_stats"] else r["log"] in (r["probe"], "inconclusive")
        ok = r["probe"] == r["want"] and agree
        bad += not ok
        print(
            f"| {name} | {r['probe']} ({r['seconds']} s) | {r['want']} | {r['log']} | "
            f"{'yes' if agree else 'NO'}{'' if ok else ' XX'} |",
            flush=True,
        )
    print(f"\n{bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
