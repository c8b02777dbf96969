"""Namespaced metric keys of tracking tools (``train/loss``, ``train/epoch``, W&B's ``_step``)."""

from __future__ import annotations

from collections.abc import Sequence

from logdoctor.ingest.aliases import FieldMap
from logdoctor.model import EPOCH, STEP

#: Namespaces whose keys are training metrics: ``train/epoch`` is the epoch counter, not an
#: epoch-level evaluation value (``*_epoch`` marks those in flat logs).
TRAIN_NAMESPACES: tuple[str, ...] = ("train/", "training/", "trainer/")
#: W&B's bookkeeping keys: its own record counter and clocks, not the trainer's step.
WANDB_INTERNAL: tuple[str, ...] = ("_step", "_runtime", "_timestamp")


def _strip(key: str) -> str | None:
    lower = key.lower()
    for ns in TRAIN_NAMESPACES:
        if lower.startswith(ns):
            return key[len(ns) :]
    return None


def canonical_renames(columns: Sequence[str], fields: FieldMap) -> dict[str, str]:
    """Renames that keep namespaced counters out of the evaluation series.

    ``train/epoch`` (HF Trainer) becomes ``epoch`` and ``train/global_step`` becomes ``step`` when
    no flat column already holds them; W&B's ``_step`` is the step only when nothing else is.
    Other ``train/...`` keys resolve through the alias table already (``train/loss`` -> loss).
    """
    renames: dict[str, str] = {}
    taken = {fields.canonical(c) for c in columns if _strip(c) is None and not c.startswith("_")}
    for col in columns:
        inner = _strip(col)
        if inner is None:
            continue
        canon = fields.canonical(inner)
        if canon in (EPOCH, STEP) and canon not in taken and canon not in renames.values():
            renames[col] = canon
    has_step = STEP in taken or STEP in renames.values()
    if "_step" in columns and not has_step:
        renames["_step"] = STEP
    return renames


def dropped(columns: Sequence[str], renames: dict[str, str]) -> list[str]:
    """W&B bookkeeping columns to drop (``_runtime``, ``_timestamp``, an unused ``_step``)."""
    return [c for c in columns if c in WANDB_INTERNAL and c not in renames]
