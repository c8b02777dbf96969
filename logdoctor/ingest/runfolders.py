"""Folders that hold several runs: a TensorBoard log dir of run sub-folders, a ``wandb/`` folder."""

from __future__ import annotations

from pathlib import Path

from logdoctor.ingest.limits import MAX_RUNS, within
from logdoctor.ingest.parsers.tensorboard import tensorboard_runs
from logdoctor.ingest.parsers.wandb import is_wandb_run

WANDB_RUN_GLOBS = ("run-*", "offline-run-*")


def wandb_runs(root: Path) -> list[Path]:
    """The run folders in a ``wandb/`` folder, oldest first; ``latest-run`` (a link) is not repeated."""
    runs = {p for g in WANDB_RUN_GLOBS for p in root.glob(g) if not p.is_symlink() and is_wandb_run(p)}
    # run-20261201_051140-id: by start time, offline or not
    return within(str(root), sorted(runs, key=lambda p: (p.name.partition("run-")[2], p.name)), MAX_RUNS, "W&B runs")


def run_folders(root: Path) -> list[Path]:
    """The runs a folder stands for when it holds several (each analysed alone), else []."""
    return wandb_runs(root) or tensorboard_runs(root)
