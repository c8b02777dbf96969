"""The same corpus through the HF Trainer (default sampler or group_by_length) and Lightning."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bench.realruns.data import MAX_LEN, VOCAB, pad
from logdoctor.emit import BatchRecorder


def _collate(features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
    ids, mask = pad([np.asarray(f["input_ids"]) for f in features])
    labels = np.where(mask, ids, -100)
    return {
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask.astype(np.int64)),
        "labels": torch.from_numpy(labels),
    }


def _drop_idx(features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
    return _collate([{k: v for k, v in f.items() if k != "idx"} for f in features])


def _callbacks(out: Path, stop_at: int | None) -> list[Any]:
    """A plain text log (``step= loss= lr= epoch=`` per logging step, appended: a resumed run
    writes its replayed steps again, as a stdout log does) and, for the first attempt of a resumed
    run, a stop at ``stop_at`` (the crash)."""
    from transformers import TrainerCallback

    class Lines(TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> Any:
            if logs and "loss" in logs:
                with out.open("a", encoding="utf-8") as fh:
                    fh.write(
                        f"step={state.global_step} loss={logs['loss']:.4f} "
                        f"lr={logs.get('learning_rate', 0.0):.4g} epoch={logs.get('epoch', 0.0):.4f}\n"
                    )
            return control

    class Stop(TrainerCallback):  # type: ignore[misc]
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
            if stop_at is not None and state.global_step >= stop_at:
                control.should_training_stop = True
            return control

    return [Lines(), Stop()]


def hf_model(seed: int) -> Any:
    """The tiny GPT-2 of the HF runs, built from a config (no download)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(
        vocab_size=VOCAB, n_positions=MAX_LEN, n_embd=32, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0
    )
    return GPT2LMHeadModel(cfg)


def hf_args(spec: Any, seed: int, tmp: str) -> Any:
    """The TrainingArguments of a spec's HF run (its sampler: batch, accumulation, strategy, seeds)."""
    from transformers import TrainingArguments

    resume = getattr(spec, "resume", None)
    return TrainingArguments(
        output_dir=tmp,
        per_device_train_batch_size=spec.batch,
        gradient_accumulation_steps=spec.accum,
        num_train_epochs=spec.epochs,
        logging_steps=spec.every,
        learning_rate=3e-3,
        warmup_steps=20,
        lr_scheduler_type="cosine",
        report_to="none",
        use_cpu=True,
        disable_tqdm=True,
        save_strategy="steps" if resume else "no",
        save_steps=resume[0] if resume else 500,
        seed=seed,
        data_seed=seed,
        dataloader_num_workers=0,
        remove_unused_columns=False,
        train_sampling_strategy=spec.strategy if spec.strategy == "group_by_length" else "random",
    )


def hf_data(seqs: list[np.ndarray]) -> list[dict[str, Any]]:
    """The HF runs' training set: each sequence's ids and its index (for the emit collator)."""
    return [{"input_ids": s.tolist(), "idx": i} for i, s in enumerate(seqs)]


def train_hf(spec: Any, seqs: list[np.ndarray], seed: int, out: Path, tmp: str) -> int:
    """A tiny GPT-2 (from a config) through ``transformers.Trainer``; the log goes to ``out``:
    logdoctor JSONL from the emit callback with statistics, else the saved trainer_state.json (or,
    for a resumed run, a plain text log written as it trains). ``spec.resume = (checkpoint, crash)``:
    the first attempt saves at ``checkpoint`` and dies at ``crash``; the second resumes from the
    checkpoint, so the steps in between are logged twice. Returns steps per epoch (optimizer steps)."""
    from transformers import PrinterCallback, Trainer
    from transformers.utils import logging as hf_logging

    from logdoctor.emit.collate import RecordingCollator
    from logdoctor.emit.hf import LogdoctorCallback

    hf_logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    resume = getattr(spec, "resume", None)
    data = hf_data(seqs)
    attempts = [resume[1], None] if resume else [None]
    trainer: Any = None
    for attempt, stop_at in enumerate(attempts):
        model = hf_model(seed)
        rec = BatchRecorder()
        collator = RecordingCollator(_collate, rec, index_key="idx") if spec.stats else _drop_idx
        callbacks = [LogdoctorCallback(rec, jsonl=out)] if spec.stats else []
        if resume and not spec.stats:
            callbacks += _callbacks(out, stop_at)
        elif resume:
            callbacks += _callbacks(Path(tmp) / "lines.log", stop_at)[1:]
        trainer = Trainer(
            model=model,
            args=hf_args(spec, seed, tmp),
            train_dataset=data,  # type: ignore[arg-type]
            data_collator=collator,
            callbacks=callbacks,
        )
        trainer.remove_callback(PrinterCallback)  # keep stdout quiet
        trainer.train(resume_from_checkpoint=f"{tmp}/checkpoint-{resume[0]}" if resume and attempt else None)
    if not spec.stats and not resume:
        trainer.state.save_to_json(str(out))
    return int(np.ceil(len(seqs) / spec.batch / spec.accum))


def train_lightning(spec: Any, seqs: list[np.ndarray], seed: int, out: Path, tmp: str) -> int:
    """The char LM through Lightning (shuffling DataLoader, CSVLogger every step); metrics.csv
    is copied to ``out``. Returns steps per epoch."""
    import lightning as L
    from lightning.pytorch.loggers import CSVLogger

    from bench.realruns.train import CharLM

    class Module(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = CharLM()

        def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], _: int) -> torch.Tensor:
            loss = self.net.loss(*batch)
            self.log("train_loss", loss, on_step=True)
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.AdamW(self.parameters(), lr=3e-3)

    def collate(items: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
        ids, mask = pad(items)
        return torch.from_numpy(ids), torch.from_numpy(mask)

    L.seed_everything(seed, verbose=False)
    loader = torch.utils.data.DataLoader(
        seqs,
        batch_size=spec.batch,
        shuffle=True,  # type: ignore[arg-type]
        collate_fn=collate,
    )
    logger = CSVLogger(tmp, name="", version="")
    trainer = L.Trainer(
        max_epochs=spec.epochs,
        accelerator="cpu",
        logger=logger,
        log_every_n_steps=1,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(Module(), loader)
    out.write_text((Path(logger.log_dir) / "metrics.csv").read_text(encoding="utf-8"), encoding="utf-8")
    return len(loader)
