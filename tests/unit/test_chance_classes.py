"""LD421 at ln k: chance for k classes when the log or its config states k (issue 29, point 6)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.detectors.chance import ChanceLossDetector
from logdoctor.ingest.configfacts import config_facts
from logdoctor.ingest.parsers.statedclasses import stated_classes
from logdoctor.model import ConfigFact, Run, RunMeta, validate_run


def _run(loss: np.ndarray, classes: int | None) -> Run:
    t = pl.DataFrame({"step": np.arange(1, loss.size + 1), "loss": loss})
    t = t.with_row_index("line_no", offset=1).with_columns(pl.col("line_no").cast(pl.Int64))
    facts = () if classes is None else (ConfigFact("classes", classes, "test num_classes"),)
    return Run(validate_run(t), dataclasses.replace(RunMeta("-", "test"), config_facts=facts))


def _loss(level: float, fall: float, n: int = 300, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return level * (1 - fall * np.arange(n) / n) + rng.normal(0, 0.02 * level, n)


@pytest.mark.parametrize(
    ("classes", "level", "fall", "found"),
    [
        (10, math.log(10), 0.0, True),  # stuck at ln 10 with 10 classes stated
        (3, math.log(3), 0.0, True),
        (1000, math.log(1000), 0.0, True),
        (10, math.log(10), 0.3, False),  # falls from chance: it learns
        (None, math.log(10), 0.0, False),  # ln 10 without a stated k is no claim
        (10, math.log(2), 0.0, False),  # a 10-class loss at 0.69 is far below chance
        (2, math.log(2), 0.0, True),
        (1, math.log(2), 0.0, False),  # num_labels=1: HF's regression head has no chance level
    ],
)
def test_chance_is_ln_k_for_the_stated_classes(classes: int | None, level: float, fall: float, found: bool) -> None:
    findings = ChanceLossDetector().analyze(_run(_loss(level, fall), classes)).findings
    assert bool(findings) == found
    if found:
        assert findings[0].evidence["classes"] == classes
        assert findings[0].evidence["chance_loss"] == pytest.approx(math.log(classes), abs=1e-4)


@pytest.mark.parametrize(
    ("lines", "k"),
    [
        (["Namespace(lr=0.1, num_classes=10, vocab_size=30000)"], 10),
        (['  "num_labels": 3,'], 3),
        (["model.n_classes: 7", "epoch 1 step 5 loss 1.9"], 7),
        (["num_labels=1"], 1),
        (["vocab_size: 50257"], None),  # a vocabulary is no class count
        (["max_num_classes=5", "num_classes_per_task=4"], None),  # the key whole only
        (["num_classes=10", "num_classes=100"], None),  # two counts: no claim
        (["num_classes=0"], None),
    ],
)
def test_text_lines_state_the_class_count(lines: list[str], k: int | None) -> None:
    frame = pl.DataFrame({"line_no": list(range(1, len(lines) + 1)), "line": lines})
    facts = stated_classes(frame)
    assert [f.value for f in facts] == ([] if k is None else [k])


def test_tracking_configs_state_classes_but_never_a_vocabulary() -> None:
    facts = {f.name: f.value for f in config_facts({"num_labels": 5, "vocab_size": 30000}, "wandb config")}
    assert facts.get("classes") == 5
    assert set(facts) == {"classes", "vocab"}  # the vocabulary is its own fact (constantloss.py's ln |V|)
    assert facts["vocab"] == 30000
    assert "classes" not in {f.name for f in config_facts({"vocab_size": 30000}, "wandb config")}


def test_a_text_log_that_states_its_classes_is_judged_at_ln_k(tmp_path: Path) -> None:
    """End to end: the header line ``num_classes: 10`` makes a loss stuck at 2.30 chance (LD421 naming
    the line); the same steps without the header are no claim."""
    loss = _loss(math.log(10), 0.0, n=200, seed=5)
    steps = [f"step {i + 1} loss {v:.4f}" for i, v in enumerate(loss)]
    stated, bare = tmp_path / "stated.log", tmp_path / "bare.log"
    stated.write_text("\n".join(["config: num_classes: 10, lr: 0.0", *steps]) + "\n")
    bare.write_text("\n".join(steps) + "\n")
    found = [f for f in pipeline.analyze(pipeline.load(str(stated))).findings if f.code == "LD421"]
    assert len(found) == 1 and "ln 10 = 2.3026 for 10 classes (log line 1 num_classes)" in found[0].message
    assert not [f for f in pipeline.analyze(pipeline.load(str(bare))).findings if f.code == "LD421"]


def _state(folder: Path, loss: np.ndarray, config: dict[str, object] | None) -> Path:
    import json

    folder.mkdir()
    history = [{"step": 10 * (i + 1), "loss": float(v), "epoch": (i + 1) / loss.size} for i, v in enumerate(loss)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": history, "global_step": 10 * loss.size}))
    if config is not None:
        (folder / "config.json").write_text(json.dumps(config))
    return folder / "trainer_state.json"


@pytest.mark.parametrize(
    ("config", "found"),
    [
        ({"architectures": ["BertForSequenceClassification"], "id2label": {"0": "a", "1": "b", "2": "c"}}, True),
        (
            {
                "architectures": ["BertForSequenceClassification"],
                "id2label": {"0": "a", "1": "b", "2": "c"},
                "problem_type": "multi_label_classification",
            },
            False,
        ),  # a sigmoid per label: chance is ln 2
        (
            {"architectures": ["LlamaForCausalLM"], "id2label": {"0": "LABEL_0", "1": "LABEL_1"}, "vocab_size": 32000},
            False,
        ),  # every config has a default id2label; a vocabulary is no class count
        (None, False),  # ln 3 without a stated k is no claim
    ],
)
def test_a_checkpoint_config_beside_trainer_state_states_the_classes(
    tmp_path: Path, config: dict[str, object] | None, found: bool
) -> None:
    """A HF checkpoint folder holds trainer_state.json and config.json: a 3-label classifier whose loss
    sits at ln 3 = 1.0986 learns nothing."""
    state = _state(tmp_path / "checkpoint-2000", _loss(math.log(3), 0.0, n=200, seed=9), config)
    hits = [f for f in pipeline.analyze(pipeline.load(str(state))).findings if f.code == "LD421"]
    assert bool(hits) == found
    if found:
        assert "ln 3 = 1.0986 for 3 classes (config.json id2label)" in hits[0].message


def _epochs_log(tmp_path: Path, valid: list[float], header: list[str]) -> Path:
    """A SpeechBrain train_log.txt: one line per epoch, the training loss falling (it memorises)."""
    lines = [*header]
    for e, v in enumerate(valid, 1):
        train = 2.0 * (1 - 0.65 * e / len(valid))
        lines.append(f"Epoch: {e}, lr: 1.00e-04 - train loss: {train:.3g} - valid loss: {v:.4g}, valid error_rate: 0.8")
    path = tmp_path / "train_log.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def _held_out(path: Path) -> list[str]:
    return [str(f.evidence.get("metric")) for f in ChanceLossDetector().analyze(pipeline.load(str(path))).findings]


CHANCE7 = math.log(7)


@pytest.mark.parametrize(("best", "found"), [(0.95, True), (0.94, False)])
def test_a_held_out_loss_that_never_beats_chance_over_many_epochs_is_found(
    tmp_path: Path, best: float, found: bool
) -> None:
    """20 epochs whose validation loss never goes below ln 7 (MELD's 7 emotions, SpeechBrain), then rises
    while the training loss falls: the model never beat guessing on held-out data. With its best
    evaluation at 94% of ln k it did, a little: no claim."""
    valid = [CHANCE7 * (1.0 + 0.01 * (e % 3)) for e in range(12)] + [CHANCE7 * (1.05 + 0.05 * e) for e in range(8)]
    valid[4] = best * CHANCE7
    assert _held_out(_epochs_log(tmp_path, valid, ["n_classes: 7"])) == (["valid_loss"] if found else [])


def test_a_few_epochs_at_chance_or_no_stated_classes_is_no_claim(tmp_path: Path) -> None:
    """Any classifier starts at ln k: 4 epochs there are its start; ln 7 without a stated k means nothing."""
    assert _held_out(_epochs_log(tmp_path, [CHANCE7] * 4, ["n_classes: 7"])) == []
    assert _held_out(_epochs_log(tmp_path, [CHANCE7] * 20, [])) == []


def test_a_held_out_loss_that_falls_below_chance_is_no_claim(tmp_path: Path) -> None:
    """MOABB's EEGNet (4 classes): the validation loss starts at ln 4 and falls well below it."""
    valid = [math.log(4) * (1 - 0.8 * (1 - math.exp(-e / 5))) for e in range(30)]
    assert _held_out(_epochs_log(tmp_path, valid, ["n_classes: 4"])) == []
