"""Folders that hold several runs: a TensorBoard log dir of run sub-folders, a ``wandb/`` folder."""

from __future__ import annotations

from pathlib import Path

from logdoctor.ingest.parsers.tensorboard import EVENT_GLOB
from logdoctor.ingest.parsers.wandb import is_wandb_run

#: Sub-folders that hold one run's split (Keras ``train/`` + ``validation/``), not a run of their own.
SPLIT_DIRS = frozenset({"train", "training", "val", "valid", "validation", "eval", "test"})
WANDB_RUN_GLOBS = ("run-*", "offline-run-*")
_MAX_DEPTH = 3
_MAX_RUNS = 1000


def _event_folders(root: Path) -> list[Path]:
    folders: set[Path] = set()
    pattern = EVENT_GLOB
    for _ in range(_MAX_DEPTH + 1):
        folders.update(p.parent for p in root.glob(pattern) if p.is_file())
        pattern = f"*/{pattern}"
    return sorted(folders)


def tensorboard_runs(root: Path) -> list[Path]:
    """The run folders of a TensorBoard log dir, when it holds more than one run (else [])."""
    if any(p.is_file() for p in root.glob(EVENT_GLOB)):
        return []  # event files at the top: the folder is one run
    runs: set[Path] = set()
    for folder in _event_folders(root):
        run = folder.parent if folder.name.lower() in SPLIT_DIRS else folder
        runs.add(run)
    return sorted(runs)[:_MAX_RUNS] if len(runs) > 1 else []


def wandb_runs(root: Path) -> list[Path]:
    """The run folders in a ``wandb/`` folder, oldest first; ``latest-run`` (a link) is not repeated."""
    runs = {p for g in WANDB_RUN_GLOBS for p in root.glob(g) if not p.is_symlink() and is_wandb_run(p)}
    # run-20261201_051140-id: by start time, offline or not
    return sorted(runs, key=lambda p: (p.name.partition("run-")[2], p.name))[:_MAX_RUNS]


def run_folders(root: Path) -> list[Path]:
    """The runs a folder stands for when it holds several (each analysed alone), else []."""
    return wandb_runs(root) or tensorboard_runs(root)
