"""logdoctor.emit in a plain PyTorch loop (one process): the records are the trained batches, and
the emitted log of a static run is diagnosed ``static``, of a bucketed shuffle ``healthy``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
pytest.importorskip("transformers", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")

import torch
from torch.utils.data import BatchSampler, DataLoader, SequentialSampler

from logdoctor import pipeline
from logdoctor.emit import JsonlWriter
from logdoctor.emit.torch import RecordingBatchSampler
from tests.frameworks.tiny import BucketedSampler, Samples, Seen, corpus, expected, pad_collate, read_jsonl, tiny_gpt2

SEQS = corpus()
RECORD = ("n_seq", "tokens", "len_mean", "len_min", "len_max", "pad_frac", "batch_fp")


def loop(path: Path, inner: Any, epochs: int = 5, accum: int = 1) -> Seen:
    torch.set_num_threads(1)
    model = tiny_gpt2()
    seen = Seen(SEQS).install(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sampler = RecordingBatchSampler(inner, [len(s) for s in SEQS])
    loader = DataLoader(Samples(SEQS), batch_sampler=sampler, collate_fn=pad_collate, num_workers=0)
    step = 0
    with JsonlWriter(path) as log:
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            for i, batch in enumerate(loader):
                loss = model(**batch).loss
                (loss / accum).backward()
                if i % accum == accum - 1:
                    opt.step()
                    opt.zero_grad()
                    step += 1
                    log.write(step, float(loss), epoch=epoch, batch=sampler.pop(accum))
    return seen


@pytest.mark.parametrize(("order", "verdict"), [("fixed", "static"), ("bucketed", "healthy")])
def test_plain_loop_records_and_verdict(tmp_path: Path, order: str, verdict: str) -> None:
    inner = BatchSampler(SequentialSampler(SEQS), 8, False) if order == "fixed" else BucketedSampler(SEQS)
    seen = loop(tmp_path / "ld.jsonl", inner)
    rows = read_jsonl(tmp_path / "ld.jsonl")
    assert len(rows) == len(seen.batches) == 60
    for row, batch in zip(rows, seen.batches, strict=True):
        assert {k: row[k] for k in RECORD} == expected(SEQS, [[batch]])
    report = pipeline.analyze(pipeline.load(str(tmp_path / "ld.jsonl")))
    assert report.verdict.batching == verdict, report.verdict.summary
    assert report.verdict.evidence["recurrence_kind"] == "fingerprint"


def test_plain_loop_with_accumulation(tmp_path: Path) -> None:
    seen = loop(tmp_path / "ld.jsonl", BucketedSampler(SEQS), epochs=1, accum=3)
    rows = read_jsonl(tmp_path / "ld.jsonl")
    assert len(rows) == 4 and len(seen.batches) == 12
    for k, row in enumerate(rows):
        assert {key: row[key] for key in RECORD} == expected(SEQS, [seen.batches[3 * k : 3 * k + 3]])
