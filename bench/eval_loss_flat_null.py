"""The null of an eval loss that stops improving while the training loss falls (healthy real runs).

For each healthy log (bench/short_jump_null.healthy_logs: the dev blind rows with expected_health ok,
the public rows with expected_health ok, the ../shared/reallogs logs answered ok) with a validation
loss of at least 4 evaluations: the stretch from which the eval loss no longer improves significantly
(memorization.MemorizationDetector.plateau, lower is better), how many-fold the training loss fell
over it, and the one-sided p that the eval loss rose after its best (OLS trend from the best on).
The logs whose truth is overfitting print the same, beside, for comparison (not to fit a threshold).

Run:

    PYTHONPATH=$PWD python bench/eval_loss_flat_null.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.blind.corpus import cache_dir  # noqa: E402
from bench.blind.corpus import rows as blind_rows  # noqa: E402
from bench.short_jump_null import healthy_logs  # noqa: E402
from logdoctor import pipeline  # noqa: E402
from logdoctor.detectors.evalseries import main_eval_loss  # noqa: E402
from logdoctor.detectors.memorization import MemorizationDetector, trend  # noqa: E402
from logdoctor.detectors.overfitting import train_window  # noqa: E402
from logdoctor.errors import LogdoctorError  # noqa: E402
from logdoctor.model import Run  # noqa: E402


def measure(run: Run) -> tuple[int, float, float, bool] | None:
    """(evals, training fold over the eval loss's flat stretch, p that it rose after its best,
    whether each row is an epoch), or None without a validation loss of 4 evals."""
    ev = main_eval_loss(run)
    if ev is None or ev.n < 4:
        return None
    tr = MemorizationDetector().plateau(ev, -1)
    fold = float("nan")
    if tr is not None:
        before, after = train_window(run, float(ev.steps[tr.start]))[0], train_window(run, float(ev.steps[-1]))[0]
        fold = before / after if before > 0 and after > 0 else float("nan")
    best = int(np.argmin(ev.values))
    p_rise = trend(ev, best, 1).p_improving if ev.n - best >= 4 else float("nan")
    return ev.n, fold, p_rise, run.meta.steps_per_epoch == 1


def report(title: str, paths: list[Path]) -> None:
    """One line per run with a validation loss."""
    print(title)
    for path in paths:
        try:
            run = pipeline.load(str(path))
        except LogdoctorError:
            continue
        got = measure(run)
        if got is not None:
            n, fold, p, per_epoch = got
            print(f"  fold {fold:7.2f}  p_rise {p:6.3f}  evals {n:4d}  epoch_rows {per_epoch!s:5}  {path.name}")


def main() -> None:
    """Print the healthy runs, then the overfitting ones."""
    report("healthy", healthy_logs())
    over = [cache_dir() / r["name"] for r in blind_rows() if r["split"] == "dev" and "overfitting" in r["failures"]]
    report("overfitting (dev)", [p for p in over if p.is_file()])


if __name__ == "__main__":
    main()
