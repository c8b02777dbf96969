"""Issue 31's logdoctor.emit faults with the real frameworks (tiny GPT-2, CPU): a collator that cannot
record says so, samples of any type can be measured, HF on an IterableDataset writes real epoch
indices, Lightning's sampler injection stops with advice, a late HF callback warns."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
pytest.importorskip("transformers", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")

import torch
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler, IterableDataset

from logdoctor import pipeline
from logdoctor.emit.collate import RecordingCollator
from logdoctor.emit.torch import RecordingBatchSampler
from tests.frameworks.tiny import PAD, Samples, Seen, corpus, expected, pad_collate, read_jsonl, tiny_gpt2

SEQS = corpus()
RECORD = ("n_seq", "tokens", "len_mean", "len_min", "len_max", "pad_frac", "batch_fp")


def record(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in RECORD if k in row}


class Pairs(torch.utils.data.Dataset):  # type: ignore[type-arg]
    """Samples as (token tensor, dataset index) tuples: no dicts anywhere."""

    def __len__(self) -> int:
        return len(SEQS)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        return torch.tensor(SEQS[i]), i


def tuple_collate(items: list[Any]) -> tuple[torch.Tensor, torch.Tensor]:
    seqs = [s if isinstance(s, torch.Tensor) else torch.as_tensor(s[0] if isinstance(s, tuple) else s) for s in items]
    ids = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=PAD)
    return ids, (ids != PAD).long()


def test_non_dict_batch_in_a_worker_fails_loudly() -> None:
    """31.2: the record of a non-dict batch collated in a worker could never reach training."""
    loader = DataLoader(
        Pairs(), batch_size=8, num_workers=2, collate_fn=RecordingCollator(tuple_collate, length=lambda s: len(s[0]))
    )
    with pytest.raises(TypeError, match="cannot reach the training process"):
        next(iter(loader))


def test_tuple_samples_with_length_and_index_functions_train_and_record() -> None:
    """31.6: any sample type, given length= and index=; the records are the trained batches."""
    torch.set_num_threads(1)
    collator = RecordingCollator(tuple_collate, length=lambda s: len(s[0]), index=lambda s: s[1])
    loader = DataLoader(Pairs(), batch_size=8, shuffle=True, collate_fn=collator)
    model = tiny_gpt2()
    seen = Seen(SEQS).install(model)
    records = []
    for ids, mask in loader:
        model(input_ids=ids, attention_mask=mask, labels=ids.masked_fill(mask == 0, -100)).loss.backward()
        records.append(collator.recorder.pop(1))
    assert len(records) == len(seen.batches) == 12
    for rec, batch in zip(records, seen.batches, strict=True):
        assert record(rec) == expected(SEQS, [[batch]])


@pytest.mark.parametrize("kind", ["list", "tensor"])
def test_token_sequences_are_measured_without_options(kind: str) -> None:
    """31.6: a sample that is itself the token ids (a list of ints, a 1-D tensor)."""
    items = [list(s) if kind == "list" else torch.tensor(s) for s in SEQS[:8]]
    collator = RecordingCollator(tuple_collate)
    collator(items)
    assert collator.recorder.pop(1) == expected(SEQS, [[list(range(8))]], fingerprint=False)


def test_unmeasurable_samples_say_what_to_pass() -> None:
    """31.6: a tuple sample or a dict without input_ids: a TypeError naming the option, not len() of a tuple."""
    with pytest.raises(TypeError, match="length=lambda s: len"):
        RecordingCollator(tuple_collate)([Pairs()[0], Pairs()[1]])
    with pytest.raises(TypeError, match="length_key="):
        RecordingCollator(pad_collate)([{"tokens": [1, 2]}])


def test_take_removes_the_record_before_the_model_sees_the_batch() -> None:
    """31.6: in a plain loop, collator.take(batch) takes the record out of a dict batch."""
    collator = RecordingCollator(pad_collate)
    batch = collator([Samples(SEQS)[i] for i in range(4)])
    rec = collator.take(batch)
    assert "logdoctor_batch" not in batch and tiny_gpt2()(**batch).loss is not None
    assert rec == expected(SEQS, [[[0, 1, 2, 3]]]) and collator.recorder.pop(1) == rec


class Stream(IterableDataset):  # type: ignore[type-arg]
    """The samples as a stream, in the same order every pass (a static pipeline)."""

    def __iter__(self) -> Any:
        return iter(Samples(SEQS))


def test_hf_iterable_dataset_writes_each_pass_as_an_epoch(tmp_path: Path) -> None:
    """31.4: three passes over an IterableDataset are epochs 0, 1, 2 (HF's own progress says
    0, 0, 1), so the fingerprints prove the static order."""
    pytest.importorskip("accelerate", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
    from transformers import Trainer, TrainingArguments

    from logdoctor.emit.hf import LogdoctorCallback

    torch.set_num_threads(1)
    args = TrainingArguments(
        output_dir=str(tmp_path),
        per_device_train_batch_size=8,
        max_steps=60,
        logging_steps=1,
        remove_unused_columns=False,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        disable_tqdm=True,
    )
    trainer = Trainer(
        model=tiny_gpt2(), args=args, train_dataset=Stream(), data_collator=RecordingCollator(pad_collate)
    )
    LogdoctorCallback.attach(trainer, jsonl=tmp_path / "ld.jsonl")
    trainer.train()
    rows = read_jsonl(tmp_path / "ld.jsonl")
    assert [r["epoch"] for r in rows] == [e for e in range(5) for _ in range(12)]
    verdict = pipeline.analyze(pipeline.load(str(tmp_path / "ld.jsonl"))).verdict
    assert verdict.batching == "static" and verdict.evidence["recurrence_kind"] == "fingerprint", verdict.summary


def test_lightning_sampler_injection_stops_with_advice() -> None:
    """31.5: Lightning re-creates a custom batch sampler to inject its DistributedSampler (DDP with
    the default use_distributed_sampler=True); the wrapper cannot be, and both messages say why."""
    pytest.importorskip("lightning", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
    from lightning.pytorch.utilities.data import _update_dataloader

    ds = Samples(SEQS)
    inner = BatchSampler(DistributedSampler(ds, num_replicas=2, rank=0), 4, False)
    loader = DataLoader(ds, batch_sampler=RecordingBatchSampler(inner, [len(s) for s in SEQS]), collate_fn=pad_collate)
    with pytest.raises(TypeError, match="use_distributed_sampler=False") as err:
        _update_dataloader(loader, DistributedSampler(ds, num_replicas=2, rank=0))
    assert "RecordingCollator" in str(err.value.__cause__)


@pytest.mark.parametrize("attach", [False, True])
def test_hf_callback_behind_the_reporting_integrations_warns(tmp_path: Path, attach: bool) -> None:
    """31.7: in Trainer(callbacks=[...]) the callback runs after TensorBoard's: say so."""
    pytest.importorskip("tensorboard", reason="needs tensorboard")
    from tests.frameworks.hfrun import train

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train(tmp_path, attach=attach, report_to=["tensorboard"], max_steps=2)
    late = [w for w in caught if "Trainer(callbacks=[...])" in str(w.message)]
    assert len(late) == (0 if attach else 1)
    if not attach:
        assert "tensorboard" in str(late[0].message) and "attach" in str(late[0].message)
