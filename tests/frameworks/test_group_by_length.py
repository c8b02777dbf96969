"""HF group_by_length over many data-set sizes: HF's own ``get_length_grouped_indices`` orders the
samples, logdoctor.emit records each optimizer step, a simulated loss follows batch length; the
verdict with batch statistics is `grouped` whatever the megabatch (2 to 50 steps), and never worse
than the verdict on the same run's loss alone (issue 31.1). A shuffled twin is never `grouped`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
pytest.importorskip("transformers", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")

import torch
from transformers.trainer_pt_utils import get_length_grouped_indices

from logdoctor import pipeline
from logdoctor.emit import JsonlWriter
from logdoctor.emit.stats import batch_fingerprint, batch_stats, combine

#: (samples, per-device batch, accumulation): HF's megabatch min(samples // (4 x batch x accum), 50)
#: spans 2 to 50 optimizer steps; every size has at least 8 optimizer steps per epoch
SIZES = [
    (80, 2, 1),
    (96, 8, 1),
    (100, 4, 2),
    (150, 3, 2),
    (200, 2, 3),
    (288, 8, 1),
    (320, 8, 1),
    (333, 4, 1),
    (384, 4, 2),
    (500, 5, 2),
    (640, 4, 4),
    (777, 6, 1),
    (1000, 8, 2),
    (1200, 2, 3),
    (1600, 8, 1),
    (2100, 4, 1),
]


def hf_mult(samples: int, batch: int, accum: int) -> int:
    return max(1, min(samples // (4 * batch * accum), 50))


def simulate(path: Path, samples: int, batch: int, accum: int, grouped: bool, stats: bool, seed: int) -> None:
    """Write the JSONL logdoctor.emit would write for this run (one line per optimizer step)."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.lognormal(4.0, 0.6, samples).astype(int), 4, 1024)
    step_size = batch * accum
    spe = -(-samples // step_size)
    epochs = 5 if spe < 120 else 3
    step, rows = 0, []
    for epoch in range(epochs):
        gen = torch.Generator().manual_seed(seed * 100 + epoch)
        order = (
            get_length_grouped_indices(lengths.tolist(), step_size, generator=gen)
            if grouped
            else torch.randperm(samples, generator=gen).tolist()
        )
        for start in range(0, samples, step_size):
            idx = order[start : start + step_size]
            micro = [np.asarray(idx[i : i + batch]) for i in range(0, len(idx), batch)]
            pairs = [(batch_stats(lengths[m]) | {"batch_fp": batch_fingerprint(m)}, m) for m in micro]
            step += 1
            rows.append((step, epoch, combine(pairs)))
    lens = np.array([r["len_mean"] for _, _, r in rows])
    z = (np.log(lens) - np.log(lens).mean()) / np.log(lens).std()
    t = np.array([s for s, _, _ in rows], dtype=float)
    loss = 1.5 + 2.0 * np.exp(-t / (0.5 * t[-1])) + 0.08 * z + rng.normal(0, 0.03, t.size)
    lr = 3e-4 * (1 - t / (t[-1] + 1))
    with JsonlWriter(path) as log:
        for (s, epoch, rec), y, r in zip(rows, loss, lr, strict=True):
            log.write(s, float(y), lr=float(r), epoch=epoch, batch=rec if stats else None)


@pytest.mark.parametrize(("samples", "batch", "accum"), SIZES, ids=lambda v: str(v))
def test_group_by_length_is_grouped_with_statistics_whatever_the_megabatch(
    tmp_path: Path, samples: int, batch: int, accum: int
) -> None:
    mult = hf_mult(samples, batch, accum)
    assert 2 <= mult <= 50
    simulate(tmp_path / "stats.jsonl", samples, batch, accum, grouped=True, stats=True, seed=samples)
    simulate(tmp_path / "loss.jsonl", samples, batch, accum, grouped=True, stats=False, seed=samples)
    with_stats = pipeline.analyze(pipeline.load(str(tmp_path / "stats.jsonl"))).verdict
    loss_only = pipeline.analyze(pipeline.load(str(tmp_path / "loss.jsonl"))).verdict
    assert with_stats.batching == "grouped", with_stats.summary
    assert loss_only.batching != "grouped" or (with_stats.confidence or 0) >= (loss_only.confidence or 0)
    assert with_stats.evidence["megabatch_period"] == mult, with_stats.summary


@pytest.mark.parametrize(("samples", "batch", "accum"), SIZES[::3], ids=lambda v: str(v))
def test_a_shuffled_twin_is_never_grouped(tmp_path: Path, samples: int, batch: int, accum: int) -> None:
    simulate(tmp_path / "stats.jsonl", samples, batch, accum, grouped=False, stats=True, seed=samples)
    verdict = pipeline.analyze(pipeline.load(str(tmp_path / "stats.jsonl"))).verdict
    assert verdict.batching not in ("grouped", "sorted", "static"), verdict.summary
