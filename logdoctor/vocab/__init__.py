"""One vocabulary of metric keys: what a logged field is, decided once for every reader and detector.

A key (``eval_loss``, ``val/box_loss``, ``metrics/mAP50-95(B)``, ``train_loss_step``) is classified
by its words alone: the training loss or one of its parts, an evaluation metric with the split it was
measured on and the direction that is better, a learning rate, a counter, a rate, or a Lightning
``*_epoch`` aggregate (an epoch mean of a training series: neither a step nor an evaluation).
This package is a leaf: it imports nothing of logdoctor.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import lru_cache

#: Runs of anything but letters and digits (any script: ``время`` stays a name, not an empty key).
_NON_ALNUM = re.compile(r"(?:[^\w]|_)+")


def normalize_key(key: str) -> str:
    """Lower-case a field name and collapse every run of non-alphanumerics to one underscore.

    ``"Grad Norm"`` -> ``"grad_norm"``, ``"tok/s"`` -> ``"tok_s"``, ``"train/loss"`` -> ``"train_loss"``.
    """
    return _NON_ALNUM.sub("_", key.strip().lower()).strip("_")


class Role(enum.Enum):
    """What a field is."""

    LOSS = "loss"  # the total training loss
    LOSS_PART = "loss part"  # one part of a training objective (box/cls/dfl, generator/discriminator)
    EVAL = "eval"  # an evaluation metric
    AGGREGATE = "aggregate"  # Lightning ``*_epoch``: an epoch mean of a training series
    LR = "lr"
    COUNTER = "counter"  # step, epoch, iteration
    RATE = "rate"  # throughput, time per step
    OTHER = "other"


class Direction(enum.Enum):
    """Which way an evaluation metric is better."""

    DOWN = "down"  # loss, WER, CER, perplexity
    UP = "up"  # accuracy, F1, BLEU, mAP


#: The first word of an evaluation key -> the split it names (``dev_loss``, ``val/acc``, ``test_wer``).
SPLITS: dict[str, str] = {
    "eval": "eval", "evaluation": "eval", "val": "val", "valid": "val", "validation": "val",
    "dev": "dev", "test": "test", "predict": "predict",
}  # fmt: skip
#: The order in which the main evaluation is chosen among splits (held-out validation before test).
SPLIT_ORDER: tuple[str, ...] = ("eval", "evaluation", "val", "valid", "validation", "dev", "test")
#: Whole keys that are evaluations by themselves: nanoGPT's ``val X`` (its validation loss), llm.c's
#: ``hellaswag`` accuracy, the split words alone.
BARE_EVAL: frozenset[str] = frozenset({"val", "valid", "validation", "eval", "test", "hellaswag", "tel"})
#: Keys that end like an aggregate but are the epoch counter (HF's TensorBoard ``train/epoch``).
EPOCH_COUNTERS: frozenset[str] = frozenset({"epoch", "train_epoch", "epochs"})
#: Names of a total loss: the objective the trainer optimises when it also logs its parts.
TOTAL_LOSS_NAMES: tuple[str, ...] = (
    "loss", "total_loss", "loss_total", "avg_loss", "loss_sum", "sum_loss", "overall_loss", "train_loss",
    "train_total_loss", "training_loss",
)  # fmt: skip
#: Words that make a key holding the word ``loss`` something else: a mixed-precision loss scale
#: (Megatron's ``initial_loss_scale``, DeepSpeed's ``loss_scale``), a count of skipped losses.
NOT_A_LOSS: frozenset[str] = frozenset({"scale", "scaler", "scaling", "skipped", "nan", "count", "num"})
#: Evaluation loss columns that writers name without a split word, with the writer: ``lm_loss_value``
#: (Megatron's validation line), ``ce_mean_words`` (Marian's valid cost).
WRITER_EVAL_LOSSES: tuple[str, ...] = ("lm_loss_value", "ce_mean_words")

#: Name words (trailing digits dropped: ``rouge1`` -> ``rouge``) of metrics where lower is better.
LOWER: frozenset[str] = frozenset(
    {"loss", "wer", "cer", "ter", "ppl", "perplexity", "error", "err", "nll", "fid", "mse", "mae", "rmse",
     "bpb", "bpc", "cost", "ce", "xent", "lpips"}
)  # fmt: skip
#: Name words of metrics where higher is better.
HIGHER: frozenset[str] = frozenset(
    {"bleu", "chrf", "acc", "accuracy", "f1", "rouge", "rougel", "rougelsum", "em", "precision", "recall",
     "auc", "auroc", "dice", "iou", "miou", "hellaswag", "correct", "meteor", "bertscore", "map", "ap",
     "aps", "apm", "apl", "apr", "apc", "ndcg", "mrr", "sacrebleu", "top", "psnr", "ssim", "mcc", "r2",
     "fitness", "pq", "sq", "rq", "spearman", "pearson", "kappa", "hmean"}
)  # fmt: skip
#: Phrases matched on the whole name (more than one word). PaddleOCR's ``norm_edit_dis`` is a
#: similarity despite its name: ppocr/metrics/rec_metric.py RecMetric.get_metric returns
#: ``1 - norm_edit_dis / all_num`` (1 when every prediction is exact); its DetMetric's ``hmean`` is
#: the F-score of precision and recall.
HIGHER_PHRASES: tuple[str, ...] = ("exact_match", "norm_edit_dis")
#: Words of quantities that are perplexity (exp of a loss), not a loss.
PERPLEXITY: frozenset[str] = frozenset({"ppl", "perplexity"})
_COUNTERS = frozenset(
    {
        "step",
        "steps",
        "global_step",
        "iter",
        "iteration",
        "iterations",
        "epoch",
        "epochs",
        "num_updates",
        "updates",
        "update",
        "batch",
        "batches",
        "sample",
        "samples",
    }
)
_RATE_WORDS = frozenset(
    {
        "throughput",
        "tok_s",
        "tokens_s",
        "samples_s",
        "it_s",
        "s_it",
        "wps",
        "ups",
        "samples_per_second",
        "steps_per_second",
        "tokens_per_second",
        "tokens_per_sec",
    }
)
_LR_RE = re.compile(r"(^|_)(lr|learning_rate|learningrate)(_\w+)?$")
#: The tasks of COCO-style evaluators, the first word of their metrics (detectron2 ``bbox/AP``,
#: ``segm/APs``, ``keypoints/AP50``; MMDetection ``bbox_mAP``): evaluations of the held-out set.
COCO_TASKS: frozenset[str] = frozenset({"bbox", "segm", "keypoints", "sem_seg", "panoptic_seg"})
#: The prefixes MMEngine evaluators put before their metrics (``{prefix}/{metric}``,
#: mmengine/evaluator/metric.py ``default_prefix``: mmdet/mmpose CocoMetric ``coco``, VOCMetric
#: ``pascal_voc``, LVISMetric ``lvis``, CityScapesMetric ``cityscapes``; mmpretrain Accuracy
#: ``accuracy``, SingleLabelMetric ``single-label``, MultiLabelMetric ``multi-label``), written after each
#: validation; like the COCO tasks' ``task/metric`` they are evaluations whatever the metric's name.
EVALUATOR_PREFIXES: frozenset[str] = frozenset(
    {"coco", "pascal_voc", "lvis", "cityscapes", "accuracy", "single-label", "multi-label"}
)
#: An Ultralytics metric: ``metrics/mAP50-95(B)`` (box), ``(M)`` mask, ``(P)`` pose.
_ULTRA_RE = re.compile(r"^metrics[/_.]", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Field:
    """What one key is.

    Attributes:
        key: the normalised key.
        role: what the field is.
        split: for an evaluation, the split word it was measured on (``val``, ``dev``, ``test``...).
        metric: the metric's name with the split word and any ``_epoch``/``_step`` suffix removed
            (``val/box_loss`` -> ``box_loss``); the normalised key for other roles.
        direction: for an evaluation (or a loss), which way is better; None when the name does not say.
    """

    key: str
    role: Role
    split: str | None
    metric: str
    direction: Direction | None

    @property
    def is_eval(self) -> bool:
        """True for an evaluation metric."""
        return self.role is Role.EVAL

    @property
    def is_perplexity(self) -> bool:
        """True for a perplexity (exp of a loss)."""
        return bool(_words(self.metric) & PERPLEXITY)

    @property
    def is_loss(self) -> bool:
        """True for a quantity named a loss (``loss``, ``box_loss``, ``loss_0``, ``ce_mean_words``)."""
        return (
            "loss" in self.metric.split("_")
            or self.metric in ("cost", "xent", "nll")
            or (self.key in WRITER_EVAL_LOSSES)
        )


def _words(name: str) -> set[str]:
    """The words of a normalised name, each also without its trailing digits (``rouge1`` -> ``rouge``)."""
    return {v for w in name.split("_") if w for v in (w, re.sub(r"\d+$", "", w)) if v}


def direction(name: str) -> Direction | None:
    """Which way a metric named ``name`` is better, from its words; None when they do not say.

    ``val_wer`` -> DOWN, ``metrics/mAP50-95(B)`` -> UP, ``eval_accuracy`` -> UP, ``lr`` -> None.
    """
    low = normalize_key(name)
    words = _words(low)
    if words & LOWER:
        return Direction.DOWN
    if words & HIGHER or any(p in low for p in HIGHER_PHRASES):
        return Direction.UP
    # ``ap50``, ``map50_95``, ``mAP@0.5`` as one word with digits: the AP family
    if any(re.fullmatch(r"m?ap\d*[a-z]?", w) for w in low.split("_")):
        return Direction.UP
    return None


def _strip_suffix(name: str) -> str:
    for suffix in ("_epoch", "_step"):
        if name.endswith(suffix) and name[: -len(suffix)]:
            return name[: -len(suffix)]
    return name


def eval_split(key: str) -> tuple[str, str] | None:
    """(split word, metric) of an evaluation key, or None when the key is no evaluation.

    ``dev_loss`` -> (dev, loss), ``val/box_loss`` -> (val, box_loss), ``val_loss_epoch`` ->
    (val, loss), ``metrics/precision(B)`` -> (val, precision_b), ``val`` -> (val, ""),
    ``train_loss_epoch`` -> None.
    """
    return _eval_split(key)


@lru_cache(maxsize=4096)
def _eval_split(key: str) -> tuple[str, str] | None:
    k = normalize_key(key)
    if k in BARE_EVAL:
        return (k, "") if k in SPLITS else ("val", k)
    first, _, rest = k.partition("_")
    if first in SPLITS and rest:
        return first, _strip_suffix(rest)
    if _ULTRA_RE.match(key.strip()) and rest and not rest.startswith("train") and direction(rest) is not None:
        return "val", rest  # Ultralytics validates after every epoch: its metrics/ are the val split's
    if is_evaluator_result(key):
        return "val", k  # an evaluator's ``task/metric`` (detectron2 ``panoptic_seg/PQ``, MMEngine ``coco/bbox_mAP``)
    if first in COCO_TASKS and rest and direction(rest) is Direction.UP:
        return "val", k  # detectron2's evaluators: ``bbox/AP``, ``segm/APs`` (MMDetection ``bbox_mAP_50``)
    return None


def is_evaluator_result(key: str) -> bool:
    """True for an evaluator's ``task/metric`` result: a score of detectron2's COCO tasks (``bbox/AP``,
    ``panoptic_seg/PQ``) and MMEngine's prefixed metrics (``coco/bbox_mAP``, ``accuracy/top1``), never a loss."""
    prefix, slash, metric = key.strip().partition("/")
    if not (slash and metric):
        return False
    if prefix.lower() in COCO_TASKS:  # a score, not the task's training counters (``bbox/num_fg``)
        return direction(metric) is Direction.UP
    return prefix.lower() in EVALUATOR_PREFIXES and "loss" not in normalize_key(metric).split("_")


def is_eval(key: str) -> bool:
    """True for an evaluation metric key (``eval_loss``, ``dev_wer``, ``val/acc``, ``test_loss``)."""
    return _eval_split(key) is not None


def is_aggregate(key: str) -> bool:
    """True for a Lightning ``*_epoch`` key that is not an evaluation: an epoch mean of a training
    series (``train_loss_epoch``, ``loss_epoch``), neither a step nor an evaluation."""
    k = normalize_key(key)
    return k.endswith("_epoch") and k not in EPOCH_COUNTERS and not is_eval(key)


def is_set_aside(key: str) -> bool:
    """True for a key that is no training-step value: an evaluation or an epoch aggregate."""
    return is_eval(key) or is_aggregate(key)


def is_loss_part(key: str) -> bool:
    """True for a training field named a loss that is not the total (``box_loss``, ``loss_cls``,
    ``train/dfl_loss``, ``loss_0``, ``g_loss``, ``loss_physics``)."""
    return classify(key).role is Role.LOSS_PART


def is_total_loss(key: str) -> bool:
    """True for a training field named as the total loss (``loss``, ``total_loss``, ``train/loss``)."""
    return classify(key).role is Role.LOSS


@lru_cache(maxsize=4096)
def classify(key: str) -> Field:
    """What ``key`` is (see :class:`Field`)."""
    k = normalize_key(key)
    split = _eval_split(key)
    if split is not None:
        name, metric = split
        return Field(k, Role.EVAL, name, metric, direction(metric or k))
    if is_aggregate(key):
        return Field(k, Role.AGGREGATE, None, _strip_suffix(k), direction(k))
    base = _strip_suffix(k) if k.endswith("_step") else k
    if base.startswith("train_") and base != "train_loss":
        base = base[len("train_") :]
    if base in TOTAL_LOSS_NAMES or base == "train_loss":
        return Field(k, Role.LOSS, None, base, Direction.DOWN)
    if "loss" in base.split("_") and not set(base.split("_")) & NOT_A_LOSS:
        return Field(k, Role.LOSS_PART, None, base, Direction.DOWN)
    if _LR_RE.search(base):
        return Field(k, Role.LR, None, base, None)
    if base in _COUNTERS:
        return Field(k, Role.COUNTER, None, base, None)
    if base in _RATE_WORDS or (base.endswith(("_per_second", "_per_sec", "_s")) and base not in ("loss_s",)):
        return Field(k, Role.RATE, None, base, None)
    return Field(k, Role.OTHER, None, base, direction(base))


def eval_loss_rank(column: str) -> tuple[int, int] | None:
    """Where a column of the evaluations table stands as the run's main evaluation loss (lower ranks
    first), or None when it is no evaluation loss.

    The total loss of a held-out split first (``eval_loss``, ``val_loss``, ``valid_loss``,
    ``validation_loss``, ``dev_loss``, in that order), then nanoGPT's bare ``val`` and the writers'
    own names (:data:`WRITER_EVAL_LOSSES`), then a dev subset's loss (``dev_other_loss``), then a
    held-out perplexity, then the test split's loss. Never: an epoch aggregate of a training series, a
    ``best``/``train`` column, a part of a loss (``val/box_loss``).
    """
    k = normalize_key(column)
    words = k.split("_")
    if "best" in words or "train" in words or is_aggregate(column):
        return None
    split = _eval_split(column)
    word, metric = split if split is not None else ("", k)
    order = SPLIT_ORDER.index(word) if word in SPLIT_ORDER else len(SPLIT_ORDER)
    if k == "val":
        return 1, 0
    if k in WRITER_EVAL_LOSSES:
        return 1, 1 + WRITER_EVAL_LOSSES.index(k)
    if word in ("predict", "") or split is None:
        return None
    if metric in ("loss", "total_loss", "loss_total") and word != "test":
        return 0, order
    if word == "dev" and metric.endswith("_loss"):
        return 2, 0  # a dev subset (``dev_clean_loss``, ``dev_other_loss``), sorted by name after
    if word != "test" and metric.split("_")[-1] in PERPLEXITY:
        return 3, order
    if word == "test" and metric in ("loss", "total_loss", "loss_total"):
        return 4, 0
    return None
