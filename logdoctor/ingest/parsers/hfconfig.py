"""The class count of a HF checkpoint's ``config.json`` beside its ``trainer_state.json``."""

from __future__ import annotations

import json
from pathlib import Path

from logdoctor.model import ConfigFact

#: A model config is a few KB; anything much larger beside the state is not one.
_MAX_BYTES = 1 << 20


def sibling_classes(state_path: Path | None) -> tuple[ConfigFact, ...]:
    """``classes`` from ``config.json`` in the folder of ``state_path`` (a HF Trainer checkpoint holds
    both): ``id2label``'s size under a ``...Classification`` head, else ``num_labels``; 1 for
    ``problem_type: regression``, 2 for multi-label (a sigmoid per label). None for a language
    model's config (its default ``id2label`` and its ``vocab_size`` are no class count), standard
    input, or a file that is missing, large or not a JSON object."""
    if state_path is None:
        return ()
    config = state_path.with_name("config.json")
    try:
        if not config.is_file() or config.stat().st_size > _MAX_BYTES:
            return ()
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return ()
    if not isinstance(data, dict):
        return ()
    if data.get("problem_type") == "regression":
        return (ConfigFact("classes", 1, "config.json problem_type"),)
    if data.get("problem_type") == "multi_label_classification":  # a sigmoid per label: chance is ln 2
        return (ConfigFact("classes", 2, "config.json problem_type"),)
    labels = data.get("id2label")
    heads = [str(a) for a in data.get("architectures") or () if str(a).endswith("Classification")]
    if isinstance(labels, dict) and len(labels) >= 2 and heads:  # every config has a default id2label
        return (ConfigFact("classes", len(labels), "config.json id2label"),)
    k = data.get("num_labels")
    if isinstance(k, int) and not isinstance(k, bool) and k >= 1:
        return (ConfigFact("classes", k, "config.json num_labels"),)
    return ()
