"""docs/emit.md's recipes, executed exactly as printed (real torch, transformers and Lightning on
CPU), with the names each recipe says it is given; the records must be the batches the model
trained on (issue 31.3: accumulation that does not divide the epoch; 31.6: the collator recipe)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
pytest.importorskip("transformers", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")

import torch
import torch.distributed as dist

from tests.frameworks.tiny import Samples, Seen, corpus, expected, pad_collate, read_jsonl, tiny_gpt2

DOC = Path(__file__).resolve().parents[2] / "docs" / "emit.md"
SEQS = corpus()
RECORD = ("n_seq", "tokens", "len_mean", "len_min", "len_max", "pad_frac", "batch_fp")


def snippets(heading: str) -> list[str]:
    """The python blocks of a section of docs/emit.md, as printed."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def record(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in RECORD if k in row}


def traced_model() -> tuple[Any, Seen, list[float]]:
    torch.set_num_threads(1)
    model = tiny_gpt2()
    seen = Seen(SEQS).install(model)
    losses: list[float] = []
    model.register_forward_hook(lambda m, a, kw, out: losses.append(float(out.loss.detach())), with_kwargs=True)
    return model, seen, losses


def test_plain_loop_with_accumulation_that_does_not_divide_the_epoch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """24 micro-batches per epoch in steps of 5: 5, 5, 5, 5 and a short step of 4."""
    monkeypatch.chdir(tmp_path)
    model, seen, losses = traced_model()
    names = {
        "ds": Samples(SEQS),
        "lengths": [len(s) for s in SEQS],
        "pad": pad_collate,
        "model": model,
        "opt": torch.optim.AdamW(model.parameters(), lr=1e-3),
        "epochs": 2,
        "accum": 5,
    }
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/pg", rank=0, world_size=1)
    try:
        exec(snippets("### PyTorch, any loop")[0], names)
    finally:
        dist.destroy_process_group()
    rows = read_jsonl(tmp_path / "logdoctor.jsonl")
    sizes = [5, 5, 5, 5, 4] * 2
    assert len(seen.batches) == 48 and len(rows) == len(sizes)
    start = 0
    for row, n in zip(rows, sizes, strict=True):
        assert record(row) == expected(SEQS, [seen.batches[start : start + n]])
        assert row["loss"] == pytest.approx(sum(losses[start : start + n]) / n, rel=1e-6)
        start += n
    assert [r["epoch"] for r in rows] == [0] * 5 + [1] * 5


def test_collator_recipe_with_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    model, seen, _ = traced_model()
    names = {
        "ds": Samples(SEQS),
        "pad": pad_collate,
        "model": model,
        "opt": torch.optim.AdamW(model.parameters(), lr=1e-3),
    }
    exec(snippets("### PyTorch, any loop")[1], names)
    rows = read_jsonl(tmp_path / "logdoctor.jsonl")
    assert len(rows) == len(seen.batches) == 12
    for row, batch in zip(rows, seen.batches, strict=True):
        assert record(row) == expected(SEQS, [[batch]])


def test_hf_trainer_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("accelerate", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
    monkeypatch.chdir(tmp_path)
    model, seen, _ = traced_model()
    names = {"model": model, "ds": Samples(SEQS), "collator": pad_collate, "out": str(tmp_path / "out")}
    exec(snippets("### Hugging Face Trainer")[0], names)
    rows = read_jsonl(tmp_path / "out" / "logdoctor.jsonl")
    assert len(rows) == len(seen.batches) == 36  # 3 epochs (the default) of 12 steps
    for row, batch in zip(rows, seen.batches, strict=True):
        assert record(row) == expected(SEQS, [[batch]])


def test_lightning_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("lightning", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")
    from tests.frameworks.plrun import Tiny, seen_batches

    monkeypatch.chdir(tmp_path)
    torch.set_num_threads(1)
    names = {"model": Tiny(SEQS, tmp_path), "ds": Samples(SEQS), "pad": pad_collate}
    exec(snippets("### PyTorch Lightning")[0], names)
    rows, seen = read_jsonl(tmp_path / "logdoctor.jsonl"), seen_batches(tmp_path)
    assert len(rows) == 6 and len(seen) == 24  # 2 epochs of 12 batches, 4 per optimizer step
    for k, row in enumerate(rows):
        assert record(row) == expected(SEQS, [seen[4 * k : 4 * k + 4]])
