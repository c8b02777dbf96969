"""Live writers for ``logdoctor tail``: a training run that writes its log as it goes, with its
own writer (the HF Trainer saving its state, Lightning's CSVLogger, the TensorBoard
SummaryWriter) or by hand (appended text, JSON lines, a W&B transaction log, a JSON document
replaced whole), and a NaN loss brought on demand.

``python -m tests.frameworks.livewriters KIND OUT`` writes healthy steps, one every ``--delay``
seconds, until ``--steps`` are written; once the file ``OUT/go`` exists the next step's loss is NaN
(and, for the real trainers, every later one: the weights are NaN), and the time just after that
step was written out (``time.time()``) goes to ``OUT/nan_at``. ``followed(KIND, OUT)`` is the path
to tail. Timing is CPU-only and single-threaded.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Every kind of live source, by the writer that writes it.
KINDS = ("text", "jsonl", "wandb", "state_replace", "hf_trainer", "lightning_csv", "tensorboard")
#: The kinds written by the training framework's own code.
REAL = ("hf_trainer", "lightning_csv", "tensorboard")


def followed(kind: str, out: Path) -> Path:
    """The path ``logdoctor tail`` follows for ``kind`` written under ``out``."""
    return (
        out
        / {
            "text": "train.log",
            "jsonl": "train.jsonl",
            "wandb": "run-live.wandb",
            "state_replace": "trainer_state.json",
            "hf_trainer": "trainer_state.json",
            "lightning_csv": "csv/version_0/metrics.csv",
            "tensorboard": "tb",
        }[kind]
    )


class Trigger:
    """The NaN on demand: ``due`` turns true once ``OUT/go`` exists; ``written`` notes the time."""

    def __init__(self, out: Path) -> None:
        self.go, self.mark = out / "go", out / "nan_at"
        self.fired = False

    def due(self) -> bool:
        self.fired = self.fired or self.go.exists()
        return self.fired

    def written(self) -> None:
        if self.fired and not self.mark.exists():
            tmp = self.mark.with_suffix(".tmp")
            tmp.write_text(repr(time.time()))
            os.replace(tmp, self.mark)


def _loss(step: int) -> float:
    return 2.0 + 2.0 * math.exp(-step / 300) + 0.02 * math.sin(step * 1.7)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _wandb_history(step: int, loss: float) -> bytes:
    """A W&B history record (``loss`` as wandb writes it: JSON, NaN included) at ``step``."""
    from tests.wandb_support import ld

    value = json.dumps(loss).encode()
    item = ld(1, ld(1, b"loss") + b"\x82\x01" + _varint(len(value)) + value)
    return ld(2, item + ld(2, b"\x08" + _varint(step)))


def _by_hand(kind: str, out: Path, steps: int, delay: float, trigger: Trigger) -> None:
    path = followed(kind, out)
    rows: list[dict[str, Any]] = []
    frames: list[bytes] = []
    for step in range(1, steps + 1):
        loss = math.nan if trigger.due() else _loss(step)
        if kind == "text":
            with path.open("a") as fh:
                fh.write(f"step {step}/{steps}: loss={loss:.4f} lr=3e-4\n")
        elif kind == "jsonl":
            with path.open("a") as fh:
                fh.write(json.dumps({"step": step, "loss": loss if math.isfinite(loss) else "nan"}) + "\n")
        elif kind == "wandb":
            from tests.wandb_support import write_log

            frames.append(_wandb_history(step, loss))
            data = write_log(frames)  # the whole log so far, framed; the new bytes are appended
            with path.open("ab") as fh:
                fh.write(data[path.stat().st_size if path.exists() else 0 :])
        else:  # state_replace: the whole document to a temporary file, then os.replace
            rows.append({"step": step, "loss": loss, "learning_rate": 3e-4, "epoch": step / 100})
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"global_step": step, "log_history": rows}))
            os.replace(tmp, path)
        trigger.written()
        time.sleep(delay)


def _hf_trainer(out: Path, steps: int, delay: float, trigger: Trigger) -> None:
    """The HF Trainer, logging every step and saving its state (``Trainer.save_state``: the
    whole trainer_state.json written again) at each log; the NaN through ``compute_loss``."""
    import torch
    from transformers import Trainer, TrainerCallback, TrainingArguments

    from tests.frameworks.tiny import Samples, corpus, pad_collate, tiny_gpt2

    torch.set_num_threads(1)

    class NanTrainer(Trainer):
        def compute_loss(self, model: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
            loss = super().compute_loss(model, inputs, *args, **kwargs)
            if trigger.due():
                loss = loss * float("nan") if not isinstance(loss, tuple) else loss
            return loss

    class SaveState(TrainerCallback):
        def __init__(self) -> None:
            self.trainer: Trainer | None = None

        def on_log(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self.trainer is not None:
                self.trainer.save_state()
                trigger.written()
            time.sleep(delay)

    saver = SaveState()
    args = TrainingArguments(
        output_dir=str(out),
        per_device_train_batch_size=8,
        max_steps=steps,
        logging_steps=1,
        learning_rate=1e-3,
        report_to=[],
        remove_unused_columns=False,
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
        data_seed=0,
        logging_nan_inf_filter=False,
    )
    trainer = NanTrainer(
        model=tiny_gpt2(), args=args, train_dataset=Samples(corpus()), data_collator=pad_collate, callbacks=[saver]
    )
    saver.trainer = trainer
    trainer.train()


def _lightning_csv(out: Path, steps: int, delay: float, trigger: Trigger) -> None:
    """Lightning with its CSVLogger flushed every step; the NaN from ``training_step``."""
    import lightning as L
    import torch

    from tests.frameworks.tiny import Samples, corpus, pad_collate, tiny_gpt2

    torch.set_num_threads(1)

    class Module(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.model = tiny_gpt2()
            self.nan = False

        def training_step(self, batch: dict[str, Any], batch_idx: int) -> Any:
            loss = self.model(**batch).loss
            self.nan = trigger.due()
            if self.nan:
                loss = loss * float("nan")
            self.log("train_loss", loss)
            return loss

        def on_train_batch_end(self, *args: Any) -> None:
            if self.nan and self.logger is not None:
                self.logger.save()  # the step's row is written by now; written() times it
                trigger.written()
            time.sleep(delay)

        def configure_optimizers(self) -> Any:
            return torch.optim.AdamW(self.parameters(), lr=1e-3)

    loader = torch.utils.data.DataLoader(Samples(corpus()), batch_size=8, collate_fn=pad_collate)
    logger = L.pytorch.loggers.CSVLogger(out, name="csv", version=0, flush_logs_every_n_steps=1)
    L.Trainer(
        accelerator="cpu",
        devices=1,
        max_steps=steps,
        max_epochs=-1,
        logger=logger,
        log_every_n_steps=1,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
    ).fit(Module(), loader)


def _tensorboard(out: Path, steps: int, delay: float, trigger: Trigger) -> None:
    """A plain PyTorch loop logging through the TensorBoard SummaryWriter, flushed every step."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    from tests.frameworks.tiny import Samples, corpus, pad_collate, tiny_gpt2

    torch.set_num_threads(1)
    model = tiny_gpt2()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(Samples(corpus()), batch_size=8, collate_fn=pad_collate)
    writer = SummaryWriter(str(followed("tensorboard", out)))
    step = 0
    while step < steps:
        for batch in loader:
            step += 1
            loss = model(**batch).loss
            if trigger.due():
                loss = loss * float("nan")
            opt.zero_grad()
            loss.backward()
            opt.step()
            writer.add_scalar("train/loss", float(loss), step)
            writer.flush()
            trigger.written()
            time.sleep(delay)
            if step >= steps:
                break
    writer.close()


WRITERS: dict[str, Callable[[Path, int, float, Trigger], None]] = {
    "hf_trainer": _hf_trainer,
    "lightning_csv": _lightning_csv,
    "tensorboard": _tensorboard,
}


ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Outcome:
    """How one followed run ended: tail's exit code, its JSON events, the seconds from the NaN
    write to tail's exit (None without a NaN)."""

    code: int
    events: list[dict[str, Any]] = field(default_factory=list)
    latency: float | None = None

    def findings(self, severity: str | None = None) -> list[dict[str, Any]]:
        return [
            e["finding"]
            for e in self.events
            if e.get("event") == "finding" and (severity is None or e["finding"]["severity"] == severity)
        ]

    @property
    def reason(self) -> str | None:
        return next((e["reason"] for e in self.events if e.get("event") == "stop"), None)


def _ready(kind: str, path: Path) -> bool:
    if kind == "tensorboard":
        return path.is_dir() and any(path.glob("events.out.tfevents.*"))
    return path.is_file() and path.stat().st_size > 0


def follow(
    kind: str,
    out: Path,
    *,
    nan: bool,
    steps: int = 3000,
    delay: float = 0.05,
    timeout: float = 120.0,
    idle: float = 4.0,
) -> Outcome:
    """Run the writer of ``kind`` under ``out`` and ``logdoctor tail --exit-on error`` on what it
    writes; with ``nan``, bring the NaN once tail has read the run's first rows (the writer runs
    on until then, however slow tail is to start: it is stopped once tail has)."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    writer = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.frameworks.livewriters",
            kind,
            str(out),
            "--steps",
            str(steps),
            "--delay",
            str(delay),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    path = followed(kind, out)
    try:
        end = time.monotonic() + timeout
        while not _ready(kind, path):
            if writer.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"{kind} writer: {writer.stderr.read().decode()[-2000:] if writer.stderr else ''}")
            time.sleep(0.02)
        tail = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "logdoctor",
                "tail",
                str(path),
                "--exit-on",
                "error",
                "-f",
                "jsonl",
                "--idle-timeout",
                str(idle),
                "--max-seconds",
                str(timeout),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        events: list[dict[str, Any]] = []
        reading = threading.Event()

        def read() -> None:
            assert tail.stdout is not None
            for line in tail.stdout:
                events.append(json.loads(line))
                if events[-1].get("event") == "notice" and events[-1]["message"].startswith("format:"):
                    reading.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        if nan:
            reading.wait(timeout)
            (out / "go").touch()
        while tail.poll() is None:
            time.sleep(0.002)
        exited = time.time()
        reader.join(5)
        latency = None
        mark = out / "nan_at"
        for _ in range(500):
            if mark.exists() or not nan:
                break
            time.sleep(0.01)
        if nan and mark.exists():
            latency = exited - float(mark.read_text())
        return Outcome(tail.returncode, events, latency)
    finally:
        writer.kill()
        writer.wait()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("kind", choices=KINDS)
    ap.add_argument("out", type=Path)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--delay", type=float, default=0.05)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    trigger = Trigger(args.out)
    if args.kind in WRITERS:
        WRITERS[args.kind](args.out, args.steps, args.delay, trigger)
    else:
        _by_hand(args.kind, args.out, args.steps, args.delay, trigger)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
