"""Train the tiny GPT-2 with Lightning and the logdoctor callback (CPU); also a script for DDP."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import lightning as L
import torch

from tests.frameworks.tiny import Samples, Seen, corpus, pad_collate, read_jsonl, tiny_gpt2


class Tiny(L.LightningModule):
    """The tiny GPT-2 as a LightningModule that notes each batch and the loss it returns."""

    def __init__(self, seqs: list[list[int]], out: Path) -> None:
        super().__init__()
        self.model = tiny_gpt2()
        self.seen = Seen(seqs).install(self.model)
        self.out = out
        self.losses: list[float] = []

    def on_train_start(self) -> None:
        self.seen.out = self.out / f"seen{self.global_rank}.json"

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> Any:
        loss = self.model(**batch).loss
        self.losses.append(float(loss.detach()))
        (self.out / f"losses{self.global_rank}.json").write_text(json.dumps(self.losses))
        self.log("loss", loss)
        return loss

    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        self.log("val_loss", self.model(**batch).loss)

    def configure_optimizers(self) -> Any:
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


def fit(out: Path, loader: Any, callback: Any, seqs: list[list[int]], *, val: Any = None, **options: Any) -> Any:
    torch.set_num_threads(1)
    out.mkdir(parents=True, exist_ok=True)
    settings: dict[str, Any] = {
        "accelerator": "cpu",
        "devices": 1,
        "max_epochs": 2,
        "callbacks": [callback],
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "enable_checkpointing": False,
        "logger": L.pytorch.loggers.CSVLogger(out, name="csv"),
        "log_every_n_steps": 1,
    }
    settings.update(options)
    mod = Tiny(seqs, out)
    L.Trainer(**settings).fit(mod, loader, val)
    return mod


def seen_batches(out: Path, rank: int = 0) -> list[list[int]]:
    return json.loads((out / f"seen{rank}.json").read_text())


def losses(out: Path, rank: int = 0) -> list[float]:
    return json.loads((out / f"losses{rank}.json").read_text())


def ddp_main(out: Path, strategy: str) -> None:
    """Two CPU processes (gloo), the documented recipe: a plain DataLoader, Lightning's sampler."""
    from torch.utils.data import DataLoader

    from logdoctor.emit.collate import RecordingCollator
    from logdoctor.emit.lightning import LogdoctorCallback

    seqs = corpus()
    if strategy.endswith("+sampler"):  # a RecordingBatchSampler left to Lightning's sampler injection
        from torch.utils.data import BatchSampler, RandomSampler

        from logdoctor.emit.torch import RecordingBatchSampler

        sampler = RecordingBatchSampler(BatchSampler(RandomSampler(Samples(seqs)), 4, False), [len(s) for s in seqs])
        loader = DataLoader(Samples(seqs), batch_sampler=sampler, collate_fn=pad_collate)
        fit(out, loader, LogdoctorCallback(sampler.recorder), seqs, devices=2, strategy=strategy.split("+")[0])
        return
    loader = DataLoader(Samples(seqs), batch_size=4, shuffle=True, collate_fn=RecordingCollator(pad_collate))
    fit(out, loader, LogdoctorCallback(jsonl=out / "logdoctor.jsonl"), seqs, devices=2, strategy=strategy)


if __name__ == "__main__":
    ddp_main(Path(sys.argv[1]), sys.argv[2])
    print("rows", len(read_jsonl(Path(sys.argv[1]) / "logdoctor.jsonl")))
