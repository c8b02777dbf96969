"""Tiny real training for the framework tests: stdlib source as text, a 1-layer GPT-2, CPU."""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from logdoctor.emit import batch_fingerprint

VOCAB = 257  # bytes + padding id 256
PAD = 256


def corpus(n: int = 96, seed: int = 0, lo: int = 8, hi: int = 48) -> list[list[int]]:
    """``n`` distinct byte sequences of varied length cut from the stdlib's own source."""
    import json as json_module

    text = inspect.getsource(json_module) + inspect.getsource(textwrap)
    rng = np.random.default_rng(seed)
    seen: set[tuple[int, ...]] = set()
    out: list[list[int]] = []
    raw = text.encode()
    while len(out) < n:
        start = int(rng.integers(0, len(raw) - hi))
        seq = list(raw[start : start + int(rng.integers(lo, hi + 1))])
        if tuple(seq) not in seen:
            seen.add(tuple(seq))
            out.append(seq)
    return out


class Samples:
    """A map-style dataset of dict features: ``input_ids`` and the dataset index ``idx``."""

    def __init__(self, seqs: list[list[int]], with_idx: bool = True) -> None:
        self.seqs = seqs
        self.with_idx = with_idx

    def __len__(self) -> int:
        return len(self.seqs)

    def __getitem__(self, i: int) -> dict[str, Any]:
        item: dict[str, Any] = {"input_ids": list(self.seqs[i])}
        if self.with_idx:
            item["idx"] = i
        return item


def pad_collate(features: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Right-pad to the batch's longest; labels ignore the padding."""
    import torch

    width = max(len(f["input_ids"]) for f in features)
    ids = torch.full((len(features), width), PAD, dtype=torch.long)
    mask = torch.zeros((len(features), width), dtype=torch.long)
    for row, f in enumerate(features):
        n = len(f["input_ids"])
        ids[row, :n] = torch.tensor(f["input_ids"])
        mask[row, :n] = 1
    labels = ids.masked_fill(mask == 0, -100)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def tiny_gpt2() -> Any:
    """A 1-layer GPT-2 built from a config (no download)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(
        vocab_size=VOCAB,
        n_positions=64,
        n_embd=32,
        n_layer=1,
        n_head=2,
        pad_token_id=PAD,
        bos_token_id=PAD,
        eos_token_id=PAD,
    )
    return GPT2LMHeadModel(cfg)


class Seen:
    """Captures the rows every training forward receives (a forward pre-hook), as dataset indices."""

    def __init__(self, seqs: list[list[int]], out: Path | None = None) -> None:
        self.index = {tuple(s): i for i, s in enumerate(seqs)}
        self.batches: list[list[int]] = []
        self.out = out

    def __call__(self, module: Any, args: Any, kwargs: dict[str, Any]) -> None:
        if not module.training:
            return
        ids, mask = kwargs["input_ids"], kwargs["attention_mask"]
        rows = [tuple(r[: int(m.sum())].tolist()) for r, m in zip(ids, mask, strict=True)]
        self.batches.append([self.index[r] for r in rows])
        if self.out is not None:
            self.out.write_text(json.dumps(self.batches))

    def install(self, model: Any) -> Seen:
        model.register_forward_pre_hook(self, with_kwargs=True, prepend=True)
        return self


def expected(seqs: list[list[int]], steps: Sequence[Sequence[Sequence[int]]], fingerprint: bool = True) -> Any:
    """The record of steps made of micro-batches (index lists), computed here from the sample
    lengths (each micro-batch padded to its longest), for comparison within float rounding."""
    import pytest

    batches = [list(b) for step in steps for b in step]
    lengths = [len(seqs[i]) for b in batches for i in b]
    padded = sum(len(b) * max(len(seqs[i]) for i in b) for b in batches)
    rec: dict[str, Any] = {
        "n_seq": len(lengths),
        "tokens": sum(lengths),
        "len_mean": sum(lengths) / len(lengths),
        "len_min": min(lengths),
        "len_max": max(lengths),
        "pad_frac": 1 - sum(lengths) / padded,
    }
    fp = batch_fingerprint([i for b in batches for i in b]) if fingerprint else None
    return Record(pytest.approx(rec, rel=1e-12), fp)


class Record:
    """Equal to an emitted record whose numbers are within float rounding of the expected ones and
    whose fingerprint (a string: ``pytest.approx`` takes numbers only since pytest 9.2) is the same."""

    def __init__(self, numbers: Any, batch_fp: str | None) -> None:
        self.numbers, self.batch_fp = numbers, batch_fp

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, dict):
            return NotImplemented
        rest = dict(other)
        fp = rest.pop("batch_fp", None)
        return bool(fp == self.batch_fp and rest == self.numbers)

    def __repr__(self) -> str:
        return f"Record({self.numbers!r}, batch_fp={self.batch_fp!r})"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class BucketedSampler:
    """A bucketed shuffle: each epoch, shuffle inside 3 length buckets, cut batches, shuffle them."""

    def __init__(self, seqs: list[list[int]], batch_size: int = 8, seed: int = 0) -> None:
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        third = len(order) // 3
        self.buckets = [order[:third], order[third : 2 * third], order[2 * third :]]
        self.batch_size, self.seed, self.epoch = batch_size, seed, 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def batches(self) -> list[list[int]]:
        rng = np.random.default_rng(self.seed * 1000 + self.epoch)
        out = []
        for bucket in self.buckets:
            members = [bucket[i] for i in rng.permutation(len(bucket))]
            out += [members[i : i + self.batch_size] for i in range(0, len(members), self.batch_size)]
        return [out[i] for i in rng.permutation(len(out))]

    def __iter__(self) -> Any:
        return iter(self.batches())

    def __len__(self) -> int:
        return sum(-(-len(b) // self.batch_size) for b in self.buckets)
