"""Real tiny trainings with a pathology induced for real: lr jump, no warm-up, slowdown, too little data.

Each run trains a small character-level MLP (context 16 chars, embedding 16, hidden 64) on the
Python standard library's own source text (shipped with every Python), on CPU, one thread, in a
few seconds, and writes a JSONL log (one record per step: step, loss, lr, grad_norm, step_time,
tokens_per_sec; eval records: step, eval_loss) plus a truth file saying what was induced:

    python bench/realruns/pathologies.py [--out fixtures/realruns] [--only NAME ...]

The logs are real measurements (step_time is the wall time of the step), so they differ from run to
run; the fixtures under fixtures/realruns are one such set, kept as test inputs.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

CONTEXT, EMBED, HIDDEN, BATCH = 16, 16, 64, 32


@dataclass(frozen=True)
class Plan:
    """One run: its schedule, data budget and the induced fault (recorded in the truth file)."""

    name: str
    steps: int = 600
    peak_lr: float = 3e-3
    warmup: int = 40
    train_chars: int = 200_000
    eval_every: int = 50
    lr_jump: tuple[int, float] | None = None  # (step, factor) applied from that step on
    slow: tuple[int, int, float] | None = None  # (first, last, extra seconds per step)
    truth: dict[str, object] = field(default_factory=dict)


PLANS: tuple[Plan, ...] = (
    Plan("healthy", truth={"pathology": "none", "expect_warning": False}),
    Plan("lr_jump", lr_jump=(320, 100.0), truth={"pathology": "lr_jump", "lr_jump_step": 320, "lr_factor": 100.0}),
    Plan("no_warmup", warmup=0, peak_lr=3e-2, truth={"pathology": "no_warmup", "peak_lr": 3e-2}),
    Plan(
        "slowdown",
        slow=(250, 380, 0.002),
        truth={"pathology": "slowdown", "slow_first": 250, "slow_last": 380, "extra_s": 0.002},
    ),
    Plan(
        "overfit",
        steps=800,
        train_chars=1_500,
        peak_lr=1e-2,
        eval_every=25,
        truth={"pathology": "overfitting", "train_chars": 1_500},
    ),
)


def corpus() -> str:
    """Text every Python installation ships: the standard library's own sources."""
    root = Path(json.__file__).resolve().parent.parent
    parts = [p.read_text(encoding="utf-8", errors="ignore") for p in sorted(root.glob("*.py"))[:40]]
    return "".join(parts)


def encode(text: str) -> torch.Tensor:
    """Bytes as token ids (a 128-symbol vocabulary: non-ASCII folded to 0)."""
    data = torch.tensor(list(text.encode("ascii", errors="replace")), dtype=torch.long)
    return data.clamp(max=127)


def batch(data: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """BATCH random windows of CONTEXT characters and the character that follows each."""
    ix = torch.randint(0, data.numel() - CONTEXT - 1, (BATCH,), generator=gen)
    x = torch.stack([data[i : i + CONTEXT] for i in ix.tolist()])
    return x, data[ix + CONTEXT]


def model() -> nn.Module:
    """Embedding -> 2-layer MLP -> next-character logits."""
    return nn.Sequential(
        nn.Embedding(128, EMBED),
        nn.Flatten(),
        nn.Linear(CONTEXT * EMBED, HIDDEN),
        nn.Tanh(),
        nn.Linear(HIDDEN, HIDDEN),
        nn.Tanh(),
        nn.Linear(HIDDEN, 128),
    )


def schedule(plan: Plan) -> Callable[[int], float]:
    """Linear warm-up then cosine decay to 10%, times the induced jump factor."""

    def lr(step: int) -> float:
        if plan.warmup and step <= plan.warmup:
            base = plan.peak_lr * step / plan.warmup
        else:
            frac = (step - plan.warmup) / max(1, plan.steps - plan.warmup)
            base = plan.peak_lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        if plan.lr_jump and step >= plan.lr_jump[0]:
            base *= plan.lr_jump[1]
        return base

    return lr


@torch.no_grad()
def evaluate(net: nn.Module, data: torch.Tensor, gen: torch.Generator) -> float:
    """Mean loss over 8 held-out batches."""
    losses = [nn.functional.cross_entropy(net(x), y).item() for x, y in (batch(data, gen) for _ in range(8))]
    return sum(losses) / len(losses)


def train(plan: Plan, text: str) -> list[dict[str, object]]:
    """Run the plan and return its log records."""
    torch.manual_seed(0)
    gen, egen = torch.Generator().manual_seed(1), torch.Generator().manual_seed(2)
    data = encode(text)
    tr, ev = data[: plan.train_chars], data[-50_000:]
    net, lr_at = model(), schedule(plan)
    opt = torch.optim.Adam(net.parameters(), lr=plan.peak_lr)
    out: list[dict[str, object]] = []
    for step in range(1, plan.steps + 1):
        t0 = time.perf_counter()
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        x, y = batch(tr, gen)
        loss = nn.functional.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        gn = float(nn.utils.clip_grad_norm_(net.parameters(), 1e9))
        opt.step()
        if plan.slow and plan.slow[0] <= step <= plan.slow[1]:
            time.sleep(plan.slow[2])
        rec: dict[str, object] = {
            "step": step,
            "loss": round(loss.item(), 5),
            "lr": lr_at(step),
            "grad_norm": round(gn, 5),
        }
        if step % plan.eval_every == 0:
            out.append({"step": step, "eval_loss": round(evaluate(net, ev, egen), 5)})
        dt = time.perf_counter() - t0  # an eval step is slower: isolated, it is not a slowdown
        rec["step_time"] = round(dt, 6)
        rec["tokens_per_sec"] = round(BATCH * CONTEXT / dt, 1)
        out.append(rec)
    return out


def main() -> None:
    """Train every plan (or those named with --only) and write <out>/pathology_<name>.log + .truth.json."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default="fixtures/realruns")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = corpus()
    for plan in PLANS:
        if args.only and plan.name not in args.only:
            continue
        t0 = time.perf_counter()
        recs = train(plan, text)
        (out / f"pathology_{plan.name}.log").write_text("".join(json.dumps(r) + "\n" for r in recs))
        truth = {
            **plan.truth,
            "steps": plan.steps,
            "peak_lr": plan.peak_lr,
            "warmup": plan.warmup,
            "generator": "bench/realruns/pathologies.py",
            "torch": torch.__version__,
        }
        (out / f"pathology_{plan.name}.truth.json").write_text(json.dumps(truth, indent=1) + "\n")
        print(f"{plan.name}: {len(recs)} records in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
