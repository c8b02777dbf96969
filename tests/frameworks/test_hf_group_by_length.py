"""HF group_by_length on small data sets, trained for real (tiny GPT-2, CPU): the megabatch is a
quarter epoch (``min(samples // (4 x batch x accumulation), 50)`` optimizer steps) and the verdict
from the emitted statistics is `grouped`, never worse than from the same run's loss alone (issue 31.1);
a run logged every 10 steps is not said to be "not fed in length order" (issue 31.8)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
pytest.importorskip("transformers", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
pytest.importorskip("accelerate", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")

from logdoctor import pipeline
from logdoctor.model import Verdict
from tests.frameworks.hfrun import train
from tests.frameworks.tiny import corpus


def verdict(path: Path) -> Verdict:
    v = pipeline.analyze(pipeline.load(str(path))).verdict
    assert v is not None
    return v


def loss_only(rows: list[dict[str, object]], path: Path) -> Path:
    """The same run as a log without batch statistics (loss, lr and epoch of every step)."""
    keep = ("step", "loss", "learning_rate", "epoch")
    path.write_text("".join(json.dumps({k: r[k] for k in keep if k in r}) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(("samples", "batch", "accum", "mult"), [(320, 8, 1, 10), (288, 4, 2, 9)])
def test_quarter_epoch_megabatches_are_grouped_from_the_statistics(
    tmp_path: Path, samples: int, batch: int, accum: int, mult: int
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows, _, _ = train(
            tmp_path,
            seqs=corpus(samples),
            max_steps=-1,
            num_train_epochs=5,
            per_device_train_batch_size=batch,
            gradient_accumulation_steps=accum,
            train_sampling_strategy="group_by_length",
        )
    assert len(rows) == 5 * samples // (batch * accum)
    stats = verdict(tmp_path / "logdoctor.jsonl")
    assert stats.batching == "grouped", stats.summary
    assert stats.evidence["megabatch_period"] == mult and stats.evidence["megabatch_hf_mult"] == mult
    assert f"mega_batch_mult = min({samples} samples" in stats.summary
    loss = verdict(loss_only(rows, tmp_path / "loss.jsonl"))
    assert loss.batching != "grouped" or stats.confidence >= loss.confidence


def test_logged_every_10_steps_makes_no_unsupported_order_claim(tmp_path: Path) -> None:
    """96 samples in batches of 2: 12-step megabatches that 10-step logging intervals never fall
    inside, so the merged statistics can neither show nor rule out the order."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows, _, _ = train(
            tmp_path,
            seqs=corpus(96),
            max_steps=-1,
            num_train_epochs=7,
            per_device_train_batch_size=2,
            logging_steps=10,
            train_sampling_strategy="group_by_length",
        )
    assert len(rows) == 33
    v = verdict(tmp_path / "logdoctor.jsonl")
    assert v.batching not in ("healthy", "static", "sorted"), v.summary
    assert "not fed in length order" not in v.summary and "order is random" not in v.summary
    assert "12-step window" in v.summary, v.summary
