"""Facts a run's configuration states (epochs, batch size, accumulation, grouping, lr, model, task, classes)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import polars as pl

from logdoctor.ingest.aliases import normalize_key
from logdoctor.model import EPOCH, STEP, ConfigFact

#: configuration keys that state a classifier's class count (``num_labels`` is HF's).
CLASS_KEYS = ("num_labels", "num_classes", "n_classes", "nb_classes", "num_class", "n_class", "number_of_classes")
#: fact -> configuration keys that state it (compared normalised, on the last path component).
FACT_KEYS: Mapping[str, tuple[str, ...]] = {
    "epochs": ("num_train_epochs", "epochs", "max_epochs", "num_epochs", "n_epochs", "train_epochs"),
    "max_steps": ("max_steps", "total_steps", "max_iters", "train_iters"),
    "batch_size": (
        "per_device_train_batch_size",
        "train_batch_size",
        "batch_size",
        "micro_batch_size",
        "train_micro_batch_size_per_gpu",
        "bsz",
    ),
    "grad_accum": (
        "gradient_accumulation_steps",
        "accumulate_grad_batches",
        "grad_accum",
        "grad_accum_steps",
        "gradient_accumulation",
    ),
    "group_by_length": ("group_by_length",),
    "lr_schedule": ("lr_scheduler_type", "lr_scheduler", "lr_schedule", "scheduler", "lr_decay_style"),
    # what experiment this is: `compare` refuses two runs whose configurations name different ones
    "model": ("model_name_or_path", "model_name", "model_id", "base_model", "model"),
    "task": ("task_name", "task", "dataset_name", "dataset_id", "dataset"),
    # the classes a classifier chooses among (chance loss ln k); never a vocabulary size: a language
    # model's loss starts near ln |V| but its chance level is the unigram entropy, far below it
    "classes": CLASS_KEYS,
    # the vocabulary a language model's output spans: ln |V| is its uniform output (a loss stuck there)
    "vocab": ("vocab_size", "n_vocab", "padded_vocab_size"),
}
_LOOKUP = {normalize_key(k): fact for fact, keys in FACT_KEYS.items() for k in keys}
_MAX_DEPTH = 4


def _flat(config: Mapping[str, Any], prefix: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    for key, value in config.items():
        path = f"{prefix}{key}"
        # W&B keeps {"desc": ..., "value": ...} in config.yaml; the record holds plain values
        if isinstance(value, Mapping) and set(value) >= {"value"} and set(value) <= {"value", "desc"}:
            value = value["value"]
        if isinstance(value, Mapping) and depth < _MAX_DEPTH:
            yield from _flat(value, f"{path}.", depth + 1)
        else:
            yield path, value


def _scalar(value: Any) -> str | float | bool | None:
    """Booleans, numbers and short strings; MLflow params arrive as text (``"8"``, ``"False"``)."""
    if isinstance(value, bool | int | float):
        return value
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        return None
    text = value.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() else number


def config_facts(config: Mapping[str, Any], origin: str) -> tuple[ConfigFact, ...]:
    """The facts ``config`` states, first key per fact (shallowest path wins), each naming its key.

    ``origin`` names the source (``wandb config``, ``mlflow params``); a ``max_steps`` of 0 or
    below (HF's "not set") is no fact.
    """
    found: dict[str, ConfigFact] = {}
    items = sorted(_flat(config), key=lambda kv: kv[0].count("."))
    for path, raw in items:
        fact = _LOOKUP.get(normalize_key(path.replace("/", ".").rsplit(".", 1)[-1]))
        value = _scalar(raw)
        if fact is None or fact in found or value is None:
            continue
        if fact == "max_steps" and (isinstance(value, str | bool) or value <= 0):
            continue
        found[fact] = ConfigFact(name=fact, value=value, source=f"{origin} {path}")
    return tuple(found[f] for f in FACT_KEYS if f in found)


def planned_steps(facts: tuple[ConfigFact, ...]) -> int | None:
    """The planned total steps a configuration states (``max_steps``), if any."""
    for fact in facts:
        if fact.name == "max_steps" and not isinstance(fact.value, str | bool):
            return int(fact.value)
    return None


def epoch_length(facts: tuple[ConfigFact, ...], table: pl.DataFrame, finished: bool) -> tuple[int | None, str]:
    """(steps per epoch, note) from the configured epochs over a finished run's steps, for records
    that carry no epoch; (None, "") unless the run ended cleanly, states no ``max_steps`` (which
    would cap it), and its last step divides evenly into the epochs."""
    if not finished or EPOCH in table.columns or table.height == 0 or planned_steps(facts):
        return None, ""
    fact = next((f for f in facts if f.name == "epochs"), None)
    if fact is None or isinstance(fact.value, str | bool) or fact.value < 2 or fact.value != int(fact.value):
        return None, ""
    epochs, last = int(fact.value), int(table[STEP].cast(pl.Int64).max() or 0)  # type: ignore[arg-type]
    if last % epochs or last // epochs < 2:
        return None, ""
    note = (
        f"steps per epoch {last // epochs} from the configured epochs ({fact.source} = {epochs}) "
        f"over the {last} steps of the finished run"
    )
    return last // epochs, note
