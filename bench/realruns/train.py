"""Train tiny models for real (torch on CPU) with real samplers; keep each log and its truth.

Usage::

    python bench/realruns/train.py                 # every run -> fixtures/realruns/<name>.log + .truth.json
    python bench/realruns/train.py --only hf_gbl_loss loop_static_stats

A 1-layer causal transformer char LM (plain loops, Lightning) or a 2-layer GPT-2 built from a config (HF Trainer; no
download), d_model 32, on Python's own stdlib sources. Each run takes seconds on one CPU thread.
See bench/realruns/README.md for the runs, their truth and the verdict's accuracy on them.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.realruns.data import MAX_LEN, VOCAB, Sampler, corpus, pad
from logdoctor.emit import BatchRecorder, format_line

OUT = Path(__file__).resolve().parents[2] / "fixtures" / "realruns"
SAMPLES = 1600


@dataclass(frozen=True)
class Spec:
    """One real training run: the framework, the sampler and how it is logged."""

    kind: str  # loop | hf | lightning
    strategy: str  # random | sorted | static | fixed | bucketed | group_by_length
    stats: bool  # logdoctor.emit batch statistics (and batch_fp unless fp is False)
    every: int = 1  # logging interval in optimizer steps
    accum: int = 1  # gradient accumulation steps
    epochs: int = 4
    fp: bool = True
    batch: int = 16
    samples: int = SAMPLES  # data set size (HF's megabatch: min(samples // (4 x batch x accum), 50) steps)
    #: HF only: (checkpoint step, step of the crash): trained to the crash, resumed from the checkpoint
    resume: tuple[int, int] | None = None


RUNS: dict[str, Spec] = {
    "loop_random_stats": Spec("loop", "random", True),
    "loop_random_stats_every10": Spec("loop", "random", True, every=10, epochs=6),
    "loop_random_loss": Spec("loop", "random", False),
    "loop_sorted_stats": Spec("loop", "sorted", True),
    "loop_sorted_loss": Spec("loop", "sorted", False),
    "loop_static_stats": Spec("loop", "static", True),
    "loop_static_sig": Spec("loop", "static", True, fp=False),
    "loop_static_stats_ga2": Spec("loop", "static", True, accum=2, batch=8),
    "loop_static_loss": Spec("loop", "static", False),
    "loop_fixed_stats": Spec("loop", "fixed", True),
    "loop_fixed_loss": Spec("loop", "fixed", False),
    "loop_bucketed_stats": Spec("loop", "bucketed", True),
    "loop_bucketed_sig": Spec("loop", "bucketed", True, fp=False),
    "loop_bucketed_stats_ga2": Spec("loop", "bucketed", True, accum=2, batch=8),
    "loop_bucketed_loss": Spec("loop", "bucketed", False),
    "hf_default_stats": Spec("hf", "random", True, batch=8, epochs=3),
    "hf_default_loss": Spec("hf", "random", False, batch=8, epochs=3),
    "hf_gbl_stats": Spec("hf", "group_by_length", True, batch=8, epochs=3),
    "hf_gbl_loss": Spec("hf", "group_by_length", False, batch=8, epochs=3),
    "hf_gbl_loss_every10": Spec("hf", "group_by_length", False, every=10, batch=8, epochs=6),
    "hf_gbl_loss_ga2": Spec("hf", "group_by_length", False, accum=2, batch=8, epochs=4),
    "hf_gbl_stats_resumed": Spec("hf", "group_by_length", True, batch=8, epochs=3, resume=(260, 290)),
    "hf_gbl_loss_resumed": Spec("hf", "group_by_length", False, batch=8, epochs=3, resume=(260, 290)),
    "lightning_random_loss": Spec("lightning", "random", False, epochs=3),
}

#: HF group_by_length with megabatches of m optimizer steps (issue 31): (samples, epochs) per m, with
#: batch 8 (no accumulation) or 4 x 2 accumulation steps (m=50 with accumulation: batch 8 x 2)
_GBL = {6: (192, 6), 10: (320, 5), 12: (384, 5), 24: (768, 4), 50: (1600, 3)}
for _m, (_n, _e) in _GBL.items():
    for _ga in (1, 2):
        _b, _size = (8, _n) if _ga == 1 else ((4, _n) if _m < 50 else (8, 2 * _n))
        for _stats in (True, False):
            _name = f"hf_gbl_m{_m}{'_ga2' if _ga == 2 else ''}_{'stats' if _stats else 'loss'}"
            if _m == 50 and _ga == 1:
                continue  # hf_gbl_stats and hf_gbl_loss above
            RUNS[_name] = Spec("hf", "group_by_length", _stats, accum=_ga, batch=_b, epochs=_e, samples=_size)


def expected(spec: Spec, steps_per_epoch: int) -> str:
    """What the log can support (the same rule as the simulator's truth): the strategy's verdict
    when batch statistics are logged densely enough to compare epochs, else inconclusive; from
    the loss alone, a full sort (epoch sawtooth) or HF megabatches (a loss period) only."""
    verdict = {
        "random": "healthy",
        "bucketed": "healthy",
        "sorted": "sorted",
        "static": "static",
        "fixed": "static",
        "group_by_length": "grouped",
    }[spec.strategy]
    if not spec.stats:  # a fixed order shows in the loss too: the same batch at the same position
        return verdict if verdict in ("sorted", "grouped") or spec.strategy == "fixed" else "inconclusive"
    if verdict in ("sorted", "grouped"):
        return verdict
    k, e = spec.every, spec.epochs
    seen = float(np.mean([1 - (1 - 1 / k) ** i for i in range(1, e)]))
    rows_later = steps_per_epoch * (e - 1) / k
    return verdict if seen >= 0.1 and rows_later * seen >= 10 else "inconclusive"


class CharLM(torch.nn.Module):
    """A 1-layer causal transformer char language model (d_model 32): fast on one CPU thread."""

    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, d)
        self.pos = torch.nn.Embedding(MAX_LEN, d)
        self.block = torch.nn.TransformerEncoderLayer(d, 2, 2 * d, dropout=0.0, batch_first=True)
        self.out = torch.nn.Linear(d, VOCAB)

    def loss(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Mean next-char cross-entropy over real tokens."""
        x = ids[:, :-1]
        t = x.shape[1]
        h = self.emb(x) + self.pos(torch.arange(t))[None]
        causal = torch.nn.Transformer.generate_square_subsequent_mask(t)
        logits = self.out(self.block(h, src_mask=causal, is_causal=True))
        target, m = ids[:, 1:], mask[:, 1:].float()
        ce = torch.nn.functional.cross_entropy(logits.transpose(1, 2), target, reduction="none")
        return (ce * m).sum() / m.sum().clamp(min=1)


def _lr(step: int, total: int, peak: float = 3e-3, warm: int = 20) -> float:
    return peak * min(1.0, (step + 1) / warm) * 0.5 * (1 + np.cos(np.pi * step / max(total, 1)))


def _short(batch: dict[str, object] | None) -> dict[str, object] | None:
    """Round the float statistics (small fixtures)."""
    if batch is None:
        return None
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in batch.items()}


def train_loop(spec: Spec, seqs: list[np.ndarray], seed: int) -> tuple[list[str], int, float]:
    """A plain PyTorch loop over the spec's sampler; returns the log lines, steps per epoch and the
    median throughput (real tokens per second) the lines state."""
    torch.manual_seed(seed)
    lengths = np.array([s.size for s in seqs])
    sampler, model = Sampler(spec.strategy, lengths, spec.batch, seed), CharLM()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    rec = BatchRecorder(lengths)
    spe = -(-len(sampler.fixed) // spec.accum)
    total, step, lines = spe * spec.epochs, 0, []
    speeds: list[float] = []
    for epoch in range(spec.epochs):
        batches = sampler.epoch()
        for g in range(0, len(batches), spec.accum):
            group = batches[g : g + spec.accum]
            for pg in opt.param_groups:
                pg["lr"] = _lr(step, total)
            opt.zero_grad()
            loss, t_step, real = 0.0, time.perf_counter(), 0
            for idx in group:
                real += int(lengths[idx].sum())
                ids, mask = pad([seqs[i] for i in idx])
                rec.record(idx)
                part = model.loss(torch.from_numpy(ids), torch.from_numpy(mask)) / len(group)
                part.backward()
                loss += float(part.detach())
            opt.step()
            step += 1
            tok_s = real / max(time.perf_counter() - t_step, 1e-9)  # real (unpadded) tokens per second
            speeds.append(tok_s)
            record = rec.pop(len(group))
            if not spec.fp:
                record.pop("batch_fp", None)
            if step % spec.every == 0:
                batch = record if spec.stats else None
                lr = float(f"{_lr(step - 1, total):.4g}")
                lines.append(
                    format_line(
                        step, round(loss, 4), total=total, batch=_short(batch), lr=lr, tok_s=round(tok_s), epoch=epoch
                    )
                )
    return lines, spe, float(np.median(speeds))


def run_one(name: str, spec: Spec, out_dir: Path, seed: int = 0) -> dict[str, object]:
    """Train one run, write ``<name>.log`` and ``<name>.truth.json``; returns the truth."""
    from bench.realruns.frameworks import train_hf, train_lightning

    torch.set_num_threads(1)
    seqs = corpus(spec.samples, seed=1)
    log = out_dir / f"{name}.log"
    t0 = time.perf_counter()
    speed: float | None = None
    with tempfile.TemporaryDirectory() as tmp:
        if spec.kind == "loop":
            lines, spe, speed = train_loop(spec, seqs, seed)
            log.write_text("\n".join(lines) + "\n", encoding="utf-8")
        elif spec.kind == "hf":
            spe = train_hf(spec, seqs, seed, log, tmp)
        else:
            spe = train_lightning(spec, seqs, seed, log, tmp)
    truth: dict[str, object] = {
        "name": name,
        **asdict(spec),
        "max_len": MAX_LEN,
        "seed": seed,
        "steps_per_epoch": spe,
        "expected_verdict": expected(spec, spe),
        "must_not": ["sorted", "static", "grouped"] if spec.strategy in ("random", "bucketed") else [],
        "train_seconds": round(time.perf_counter() - t0, 1),
    }
    if speed is not None:  # the throughput the log states (tok/s of real tokens), for `compare`
        truth["median_tokens_per_s"] = round(speed, 1)
    log.with_suffix(".truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    return truth


def main(argv: list[str] | None = None) -> int:
    """Train the selected runs (all by default)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted(RUNS), help="runs to train")
    ap.add_argument("--out", type=Path, default=OUT, help="fixture folder")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only or RUNS:
        truth = run_one(name, RUNS[name], args.out)
        print(f"{name}: {truth['train_seconds']} s, expected {truth['expected_verdict']}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
