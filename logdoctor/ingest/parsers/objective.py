"""A training objective logged only in parts: which field (or sum of fields) the analysis reads as the loss.

A log with no field named the training loss is read, not refused, when it holds:
- a field named as the total (``total_loss``: detectron2's ``metrics.json``): that field;
- parts that the trainer's own code sums into the loss it steps on (a detector's box/cls/dfl): their sum,
  and the report says so;
- other parts (generator/discriminator, data/physics, one per task): the main part, named, and the others
  listed with the ``--map`` that picks one of them.
The vocabulary (:mod:`logdoctor.vocab`) says what a key is; ``--map loss=FIELD`` always wins (the caller
asks only when no field resolves to the loss).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from logdoctor import vocab

#: Words of the parts of a detection/segmentation/pose loss that the trainers' own code sums into the
#: loss they step on, with where: ultralytics ``ultralytics/utils/loss.py`` (v8DetectionLoss,
#: v8SegmentationLoss, v8PoseLoss: ``loss.sum() * batch_size`` over box, cls, dfl [+ seg | pose, kobj]);
#: YOLOv5 ``utils/loss.py`` ComputeLoss (``(lbox + lobj + lcls) * bs``); detectron2
#: ``detectron2/engine/train_loop.py`` SimpleTrainer.run_step (``losses = sum(loss_dict.values())``);
#: torchvision ``references/detection/engine.py`` (``sum(loss for loss in loss_dict.values())``).
SUMMED_PART_WORDS: frozenset[str] = frozenset(
    {"box", "bbox", "obj", "objectness", "cls", "classifier", "dfl", "seg", "mask", "pose", "kobj", "rpn",
     "reg", "giou", "iou", "dice", "ce", "l1", "loc", "conf", "rle"}
)  # fmt: skip
#: Words that name the main one of several objectives (a GAN's generator, a model's data term).
MAIN_WORDS: tuple[str, ...] = ("g", "gen", "generator", "main", "data", "lm", "task", "total")
#: Words never part of a part's name (the split, the word loss, aggregate suffixes).
_NOISE = frozenset({"loss", "train", "training", "step"})
#: How the note of a loss read from the main part begins: the report's notes say so, and a rule that
#: needs the loss to be a total of the other parts (detectors/lossweights.py) reads it there.
MAIN_PART_NOTE = "the log has no total loss: the objective analysed is its main part"
#: At most this many other parts are named in the note.
MAX_NAMED = 6


@dataclass(frozen=True, slots=True)
class Objective:
    """What the analysis reads as the training loss of a log with no field named the loss.

    Attributes:
        fields: the source fields: the total's one field, the parts summed, or the main part's one field.
        summed: True when the loss is the sum of ``fields`` (a trainer that sums its parts).
        others: parts left out (not summed): each is an objective of its own.
        note: what the report says about it.
    """

    fields: tuple[str, ...]
    summed: bool
    others: tuple[str, ...]
    note: str


def _part_words(key: str) -> set[str]:
    words = {re.sub(r"\d+$", "", w) for w in vocab.normalize_key(key).split("_")}
    return {w for w in words if w and w not in _NOISE}


#: Per-optimizer totals: Coqui's Trainer (``trainer/trainer.py``) logs ``loss_<i>`` for optimizer i,
#: and its GAN recipes (VITS, HiFi-GAN ``train_step``) step the discriminator as optimizer 0 and the
#: generator last.
_NUMBERED = re.compile(r"^(?:train_)?loss_(\d+)$")


def _main(parts: list[str]) -> str:
    """The main part: the last per-optimizer total (``loss_1``: the generator's), else one named like a
    generator or a data term, else the first in the log's order."""
    numbered = [(int(m.group(1)), p) for p in parts if (m := _NUMBERED.match(vocab.normalize_key(p)))]
    if len(numbered) > 1:
        return max(numbered)[1]
    for word in MAIN_WORDS:
        for p in parts:
            if word in _part_words(p):
                return p
    return parts[0]


def objective_of(keys: Iterable[str]) -> Objective | None:
    """The objective of a log whose training fields are ``keys`` (none of which is named the loss),
    or None when no field is a loss or a part of one (an evaluation-only log, a table of other values)."""
    train = [k for k in keys if not vocab.is_set_aside(k)]
    totals = [k for k in train if vocab.is_total_loss(k)]
    if totals:
        key = sorted(totals, key=lambda k: (vocab.normalize_key(k) != "total_loss", k))[0]
        return Objective(
            (key,),
            False,
            (),
            f"the log names no field 'loss': its total `{key}` is read as the "
            "training loss (--map loss=<field> picks another)",
        )
    parts = [k for k in train if vocab.is_loss_part(k) and not vocab.normalize_key(k).startswith("avg_")]
    if not parts:
        return None
    if len(parts) > 1 and all(_part_words(p) and _part_words(p) <= SUMMED_PART_WORDS for p in parts):
        shown = " + ".join(f"`{p}`" for p in parts)
        return Objective(
            tuple(parts),
            True,
            (),
            (
                f"the log has no total loss, only its parts: the training loss analysed is their sum {shown}, "
                "as the trainer's own code sums them into the loss it steps on (--map loss=<field> picks one part)"
            ),
        )
    main = _main(parts)
    others = tuple(p for p in parts if p != main)
    rest = ", ".join(f"`{p}`" for p in others[:MAX_NAMED]) + (
        f" and {len(others) - MAX_NAMED} more" if len(others) > MAX_NAMED else ""
    )
    note = f"{MAIN_PART_NOTE} `{main}`" + (
        f"; the other parts ({rest}) are objectives of their own, each read with --map loss=<part>" if others else ""
    )
    return Objective((main,), False, others, note)


def summed_eval_parts(objective: Objective, keys: Iterable[str]) -> tuple[str, tuple[str, ...]] | None:
    """(eval loss column, its parts) when an evaluation split logs the same parts as a summed training
    objective (``val/box_loss`` ... beside ``train/box_loss`` ...): the held-out loss is their sum,
    as the training loss is. None when some part has no evaluation counterpart."""
    by_split: dict[str, dict[str, str]] = {}
    for k in keys:
        f = vocab.classify(k)
        if f.is_eval and f.split is not None:
            by_split.setdefault(f.split, {}).setdefault(f.metric, k)
    wanted = [vocab.classify(p).metric for p in objective.fields]
    for split in vocab.SPLIT_ORDER:
        have = by_split.get(split, {})
        if all(m in have for m in wanted):
            return f"{split}_loss", tuple(have[m] for m in wanted)
    return None
