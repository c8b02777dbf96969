"""Simulate a live training run for trying ``logdoctor tail`` by hand (see docs/tail.md).

``python bench/live_writer.py /tmp/live/train.log --rate 20 --steps 2000 --epoch 200 --nan-at 900``
writes one text-log line per step: a decreasing loss with an epoch sawtooth (length-sorted
batches), a spike every ``--spike-every`` steps, and a NaN at ``--nan-at``.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path


def main() -> None:
    """Write the log, one step every 1/rate seconds."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("path")
    ap.add_argument("--rate", type=float, default=20.0)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--epoch", type=int, default=200)
    ap.add_argument("--spike-every", type=int, default=0)
    ap.add_argument("--nan-at", type=int, default=0)
    args = ap.parse_args()
    path = Path(args.path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    start = time.monotonic()
    with path.open("a") as fh:
        fh.write("config: lr=3e-4 batch=12 sampler=sorted\n")
        for s in range(1, args.steps + 1):
            pos = (s - 1) % args.epoch / args.epoch
            length = 40 + 960 * pos
            loss = 2.0 + 2.0 * math.exp(-s / 800) + 0.6 * pos + rng.gauss(0, 0.03)
            if args.spike_every and s % args.spike_every == 0:
                loss += 2.5
            value = "nan" if s == args.nan_at else f"{loss:.4f}"
            acc = 0.3 + 0.4 * (1 - math.exp(-s / 900))
            fh.write(
                f"step {s}/{args.steps}: loss={value} acc={acc:.4f} "
                f"lr=3e-4 | batch: n_seq=12 tokens={int(12 * length)} len_mean={length:.1f}\n"
            )
            fh.flush()
            time.sleep(max(0.0, start + s / args.rate - time.monotonic()))


if __name__ == "__main__":
    main()
