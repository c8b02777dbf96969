"""Train the tiny GPT-2 with the Hugging Face Trainer and the logdoctor callback (CPU, seconds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.frameworks.tiny import Samples, Seen, corpus, pad_collate, read_jsonl, tiny_gpt2


def train(
    out: Path,
    *,
    attach: bool = False,
    eval_every: int = 0,
    jsonl: Path | None = None,
    seqs: list[list[int]] | None = None,
    resume: str | None = None,
    **overrides: Any,
) -> tuple[list[dict[str, Any]], Seen, Any]:
    """(JSONL rows, the batches the model's forward received, the trainer)."""
    import torch
    from transformers import Trainer, TrainingArguments

    from logdoctor.emit.collate import RecordingCollator
    from logdoctor.emit.hf import LogdoctorCallback

    torch.set_num_threads(1)
    seqs = seqs if seqs is not None else corpus()
    options: dict[str, Any] = {
        "output_dir": str(out),
        "per_device_train_batch_size": 8,
        "max_steps": 24,
        "logging_steps": 1,
        "learning_rate": 1e-3,
        "report_to": [],
        "remove_unused_columns": False,
        "save_strategy": "no",
        "use_cpu": True,
        "disable_tqdm": True,
        "seed": 0,
        "data_seed": 0,
    }
    if eval_every:
        options.update(eval_strategy="steps", eval_steps=eval_every, per_device_eval_batch_size=4)
    options.update(overrides)
    model = tiny_gpt2()
    collator = RecordingCollator(pad_collate)
    path = jsonl if jsonl is not None else out / "logdoctor.jsonl"
    callbacks = [] if attach else [LogdoctorCallback(collator.recorder, jsonl=path)]
    trainer = Trainer(
        model=model,
        args=TrainingArguments(**options),
        train_dataset=Samples(seqs),
        eval_dataset=Samples(corpus(12, seed=1)) if eval_every else None,
        data_collator=collator,
        callbacks=callbacks,
    )
    if attach:
        LogdoctorCallback.attach(trainer, jsonl=path)
    seen = Seen(seqs).install(model)
    trainer.train(resume_from_checkpoint=resume)
    return (read_jsonl(path) if path.exists() else []), seen, trainer
