"""``logdoctor.probe`` on real samplers, run for real (torch, the HF Trainer from a tiny config,
Lightning, DistributedSampler at 2 and 4 ranks, IterableDatasets): each verdict right, and the
records and numbers equal to a direct computation over the same batches."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")

from torch.utils.data import (  # noqa: E402
    BatchSampler,
    DataLoader,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    Sampler,
)

from logdoctor.bucketing.plan import recommend  # noqa: E402
from logdoctor.emit import BatchRecorder  # noqa: E402
from logdoctor.emit.stats import batch_fingerprint, batch_stats, combine  # noqa: E402
from logdoctor.model import BATCH_FP, MICRO_FP, PAD_FRAC, SEQS, TOKENS, Report  # noqa: E402
from logdoctor.probing import probe  # noqa: E402
from tests.frameworks.tiny import BucketedSampler, Samples, corpus, pad_collate  # noqa: E402

SEQS_ = corpus(480, seed=3)
LENGTHS = np.array([len(s) for s in SEQS_])
DATA = Samples(SEQS_, with_idx=False)
BLAMES = ("sorted", "static", "grouped")


class LengthSorted(Sampler[list[int]]):
    """Batches cut from the data set sorted by length, fed in that order every epoch."""

    def __init__(self, size: int = 8) -> None:
        order = np.argsort(LENGTHS, kind="stable")
        self.batches = [order[i : i + size].tolist() for i in range(0, order.size, size)]

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)


class SortedOnceShuffledOrder(LengthSorted):
    """The pattern the project started from: sort and batch once, shuffle only the batch order."""

    def __iter__(self) -> Iterator[list[int]]:
        return iter([self.batches[i] for i in torch.randperm(len(self.batches)).tolist()])


def _same_batches(report: Report, batches: list[list[int]]) -> None:
    """The probe's rows are the records emit's recorder writes for these batches, in this order."""
    rec = BatchRecorder(LENGTHS)
    want = [rec.record(b) for b in batches]
    t = report.run.table
    assert t[BATCH_FP].to_list() == [w["batch_fp"] for w in want]
    assert t[TOKENS].to_list() == [w["tokens"] for w in want]
    assert t[PAD_FRAC].to_list() == [w["pad_frac"] for w in want]


def test_random_sampler_is_healthy_with_its_numbers_computed_directly() -> None:
    def loader() -> DataLoader[Any]:
        return DataLoader(
            DATA,
            batch_size=8,
            sampler=RandomSampler(DATA, generator=torch.Generator().manual_seed(5)),
            collate_fn=pad_collate,
        )

    report = probe(loader())
    again = loader()
    batches = [list(b) for _ in range(3) for b in again.batch_sampler]
    _same_batches(report, batches)
    assert report.verdict.batching == "healthy"
    p = report.sampler
    assert p is not None and p.lengths_source == "len(dataset[i]['input_ids'])"
    real = np.array([LENGTHS[b].sum() for b in batches])
    padded = np.array([len(b) * LENGTHS[b].max() for b in batches])
    assert p.efficiency == pytest.approx(real.sum() / padded.sum(), rel=1e-12)
    assert p.tokens is not None and p.tokens.median == float(np.median(real))
    assert p.recurrence == 0.0 and p.recurrence_chance is not None and p.recurrence_chance < 1e-9
    fix = p.fix
    assert fix is not None
    budget = int(math.ceil(padded.max() / 128) * 128)
    plan = recommend(LENGTHS, budget, max_seq_len=min(budget, int(LENGTHS.max())), shuffles=2, seed=0)
    assert fix.bucketed_vs_random == plan.relative_throughput("bucketed", "random")
    own = real.sum() / padded.sum()
    assert fix.bucketed_vs_this == pytest.approx(plan.strategies["bucketed"].padding_efficiency / own)


@pytest.mark.parametrize(
    ("sampler", "verdict"),
    [
        (LengthSorted(), "sorted"),
        (SortedOnceShuffledOrder(), "static"),
        (BucketedSampler(SEQS_, batch_size=8), "healthy"),
    ],
)
def test_batch_samplers_of_a_dataloader_get_their_verdict(sampler: Sampler[list[int]], verdict: str) -> None:
    report = probe(DataLoader(DATA, batch_sampler=sampler, collate_fn=pad_collate))
    assert report.verdict.batching == verdict, report.verdict.summary
    p = report.sampler
    assert p is not None and p.samples == 480 and p.epochs == 3
    if isinstance(sampler, BucketedSampler):  # it reshuffles only because set_epoch reaches it
        assert p.set_epoch == ("BucketedSampler",)
        assert probe(DataLoader(DATA, batch_sampler=sampler), set_epoch=False).verdict.batching == "static"


def test_the_static_pattern_is_priced_on_its_own_lengths() -> None:
    report = probe(DataLoader(DATA, batch_sampler=SortedOnceShuffledOrder(), collate_fn=pad_collate))
    p = report.sampler
    assert p is not None and p.fix is not None and p.recurrence_by_epoch == (0.0, 1.0, 1.0)
    assert "Priced on these 480 samples' lengths: a bucketed shuffle with" in report.verdict.hint
    assert p.fix.bucketed_vs_this is not None and p.efficiency is not None and p.efficiency > 0.9


def test_a_fixed_order_dataloader_over_prebuilt_batches_is_static() -> None:
    order = np.random.default_rng(2).permutation(480)
    prebuilt = [order[i : i + 8].tolist() for i in range(0, 480, 8)]
    report = probe(DataLoader(DATA, batch_sampler=prebuilt, collate_fn=pad_collate))
    assert report.verdict.batching == "static" and "same order every epoch" in report.verdict.summary
    _same_batches(report, prebuilt * 3)


def _trainer(tmp_path: Any, **overrides: Any) -> Any:
    from transformers import Trainer, TrainingArguments

    from tests.frameworks.tiny import tiny_gpt2

    options: dict[str, Any] = {
        "output_dir": str(tmp_path),
        "per_device_train_batch_size": 8,
        "report_to": [],
        "use_cpu": True,
        "remove_unused_columns": False,
        "seed": 0,
        "data_seed": 0,
    }
    args = TrainingArguments(**{**options, **overrides})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Trainer(model=tiny_gpt2(), args=args, train_dataset=Samples(SEQS_), data_collator=pad_collate)


def test_hf_group_by_length_is_grouped_and_the_default_sampler_healthy(tmp_path: Any) -> None:
    pytest.importorskip("transformers")
    grouped = probe(_trainer(tmp_path, train_sampling_strategy="group_by_length"))
    assert grouped.verdict.batching == "grouped", grouped.verdict.summary
    assert "LengthGroupedSampler" in grouped.verdict.summary
    p = grouped.sampler
    assert p is not None and p.lengths_source == "LengthGroupedSampler.lengths" and "DataLoaderShard" in p.chain
    default = probe(_trainer(tmp_path))
    assert default.verdict.batching == "healthy"
    assert default.sampler is not None and "SeedableRandomSampler" in default.sampler.set_epoch


def test_hf_gradient_accumulation_merges_micro_batches_per_step(tmp_path: Any) -> None:
    pytest.importorskip("transformers")
    report = probe(
        _trainer(tmp_path, train_sampling_strategy="group_by_length", gradient_accumulation_steps=2), epochs=2
    )
    t = report.run.table
    assert report.verdict.batching == "grouped"
    assert report.sampler is not None and report.sampler.grad_accum == 2
    assert set(t[SEQS].to_list()) == {16} and t.height == 2 * 30
    assert all(fp.count("+") == 1 for fp in t[MICRO_FP].to_list())


@pytest.mark.parametrize("world", [2, 4])
def test_distributed_sampler_ranks_as_ddp_builds_them(world: int) -> None:
    loader = DataLoader(DATA, batch_size=8, sampler=DistributedSampler(DATA, num_replicas=1, rank=0, shuffle=True))
    report = probe(loader, world_size=world)
    assert report.verdict.batching == "healthy"
    p = report.sampler
    assert p is not None and p.world_size == world and p.set_epoch == ("DistributedSampler",) * 1
    want = []
    for epoch in range(3):
        per_rank = []
        for rank in range(world):
            ds = DistributedSampler(DATA, num_replicas=world, rank=rank, shuffle=True)
            ds.set_epoch(epoch)
            per_rank.append(list(BatchSampler(ds, 8, False)))
        for step in zip(*per_rank, strict=True):
            pairs = [({**batch_stats(LENGTHS[b]), "batch_fp": batch_fingerprint(b)}, np.asarray(b)) for b in step]
            want.append(combine(pairs))
    t = report.run.table
    assert t[BATCH_FP].to_list() == [w["batch_fp"] for w in want]
    assert t[MICRO_FP].to_list() == [w["micro_fp"] for w in want]
    assert set(t[SEQS].to_list()) == {8 * world}
    fixed = DataLoader(DATA, batch_size=8, sampler=DistributedSampler(DATA, num_replicas=1, rank=0, shuffle=False))
    assert probe(fixed, world_size=world).verdict.batching == "static"
    # the classic DDP mistake: a loop that never calls set_epoch reshuffles the same way every epoch
    assert probe(loader, world_size=world, set_epoch=False).verdict.batching == "static"


def test_a_plain_shuffling_loader_gets_a_distributed_sampler_per_rank() -> None:
    report = probe(DataLoader(DATA, batch_size=8, shuffle=True), world_size=2)
    assert report.verdict.batching == "healthy"
    assert report.sampler is not None and "DistributedSampler(shuffle=True, seed=0)" in report.sampler.ranks


class Stream(IterableDataset[dict[str, list[int]]]):
    """A stream of samples: reshuffled each epoch (set_epoch), sorted by length, or endless."""

    def __init__(self, mode: str) -> None:
        self.mode, self.epoch = mode, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[dict[str, list[int]]]:
        if self.mode == "endless":
            rng = np.random.default_rng(0)
            while True:
                yield {"input_ids": SEQS_[int(rng.integers(len(SEQS_)))]}
        order = (
            np.argsort(LENGTHS, kind="stable")
            if self.mode == "sorted"
            else np.random.default_rng(self.epoch).permutation(len(SEQS_))
        )
        for i in order:
            yield {"input_ids": SEQS_[int(i)]}


@pytest.mark.parametrize(("mode", "verdict"), [("shuffled", "healthy"), ("sorted", "sorted")])
def test_an_iterable_dataset_is_streamed_and_judged(mode: str, verdict: str) -> None:
    report = probe(DataLoader(Stream(mode), batch_size=8, collate_fn=pad_collate))
    assert report.verdict.batching == verdict
    p = report.sampler
    assert p is not None and p.lengths_source == "each streamed sample" and p.batches == 180
    assert any("IterableDataset has no sample indices" in n for n in p.notes)


def test_an_endless_stream_is_bounded_and_the_report_says_so() -> None:
    report = probe(DataLoader(Stream("endless"), batch_size=8), max_batches=400)
    p = report.sampler
    assert p is not None and p.bounded and p.batches == 400
    assert report.verdict.batching not in BLAMES


def test_a_lightning_datamodule_is_probed_through_its_train_dataloader() -> None:
    L = pytest.importorskip("lightning")

    class Module(L.LightningDataModule):  # type: ignore[misc,name-defined]
        def setup(self, stage: str) -> None:
            self.data = DATA

        def train_dataloader(self) -> DataLoader[Any]:
            return DataLoader(self.data, batch_size=8, shuffle=True, collate_fn=pad_collate)

    report = probe(Module(), world_size=2)
    assert report.verdict.batching == "healthy"
    assert report.sampler is not None and report.sampler.world_size == 2


def test_the_cli_probes_a_torch_target_at_several_ranks(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from logdoctor.cli import main

    (tmp_path / "pipe.py").write_text(
        "import torch\nfrom torch.utils.data import DataLoader\n\n\n"
        "def loader(batch_size=8):\n"
        "    data = [list(range(1 + i % 50)) for i in range(320)]\n"
        "    return DataLoader(data, batch_size=batch_size, shuffle=False)\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["probe", "pipe.py:loader", "--world-size", "2", "--arg", "batch_size=4", "-f", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"]["batching"] == "static"  # a loader that never shuffles: the same batches every epoch
    assert doc["sampler"]["world_size"] == 2 and doc["sampler"]["batch_size"] == 4
    assert "DistributedSampler(shuffle=False, seed=0)" in doc["sampler"]["ranks"]
    assert doc["sampler"]["lengths_source"] == "len(dataset[i])"
