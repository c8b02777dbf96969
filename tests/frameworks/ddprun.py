"""Two CPU processes (gloo), as torchrun starts them: a plain PyTorch DDP loop and the HF Trainer."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def _env(rank: int, port: int) -> None:
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE="2",
        LOCAL_WORLD_SIZE="2",
        OMP_NUM_THREADS="1",
    )


def torch_loop(rank: int, out: Path, port: int) -> None:
    """DistributedSampler -> BatchSampler -> RecordingBatchSampler, accumulation 2, set_epoch each epoch."""
    _env(rank, port)
    import torch
    import torch.distributed as dist
    from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

    from logdoctor.emit import JsonlWriter
    from logdoctor.emit.dist import is_rank_zero
    from logdoctor.emit.torch import RecordingBatchSampler
    from tests.frameworks.tiny import Samples, Seen, corpus, pad_collate, tiny_gpt2

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    seqs = corpus()
    model = tiny_gpt2()
    Seen(seqs, out / f"seen{rank}.json").install(model)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    sampler = RecordingBatchSampler(
        BatchSampler(DistributedSampler(Samples(seqs), shuffle=True), 4, False), [len(s) for s in seqs]
    )
    loader = DataLoader(Samples(seqs), batch_sampler=sampler, collate_fn=pad_collate)
    writer = JsonlWriter(out / "logdoctor.jsonl") if is_rank_zero() else None
    step, losses = 0, []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for i, batch in enumerate(loader):
            loss = ddp(**batch).loss
            (loss / 2).backward()
            losses.append(float(loss.detach()))
            if i % 2 == 1:
                opt.step()
                opt.zero_grad()
                step += 1
                record = sampler.pop_global(2)
                if writer is not None:
                    writer.write(step, sum(losses[-2:]) / 2, epoch=epoch, batch=record)
    if writer is not None:
        writer.close()
    dist.destroy_process_group()


def docs_loop(rank: int, out: Path, port: int) -> None:
    """docs/emit.md's plain-loop recipe as printed, accum=5 on 12 micro-batches per rank and epoch."""
    _env(rank, port)
    import torch
    import torch.distributed as dist

    from tests.frameworks.test_docs_snippets import snippets
    from tests.frameworks.tiny import Samples, Seen, corpus, pad_collate, tiny_gpt2

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    os.chdir(out)
    seqs = corpus()
    model = tiny_gpt2()
    Seen(seqs, out / f"seen{rank}.json").install(model)
    losses: list[float] = []
    model.register_forward_hook(lambda m, a, kw, o: losses.append(float(o.loss.detach())), with_kwargs=True)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    names = {
        "ds": Samples(seqs),
        "lengths": [len(s) for s in seqs],
        "pad": pad_collate,
        "model": ddp,
        "opt": torch.optim.AdamW(ddp.parameters(), lr=1e-3),
        "epochs": 2,
        "accum": 5,
    }
    exec(snippets("### PyTorch, any loop")[0], names)
    (out / f"losses{rank}.json").write_text(json.dumps(losses))
    dist.destroy_process_group()


def hf_trainer(rank: int, out: Path, port: int) -> None:
    """The HF recipe under two processes: rank 0 writes the global batch's record."""
    _env(rank, port)
    from tests.frameworks.hfrun import train
    from tests.frameworks.tiny import Seen

    orig_install = Seen.install

    def install(self: Seen, model: object) -> Seen:
        self.out = out / f"seen{rank}.json"
        return orig_install(self, model)

    Seen.install = install  # type: ignore[method-assign]
    train(
        out, attach=True, max_steps=12, gradient_accumulation_steps=2, per_device_train_batch_size=4, ddp_backend="gloo"
    )


if __name__ == "__main__":
    import torch.multiprocessing as mp
    import transformers  # noqa: F401  # imported once here, inherited by the forked ranks

    import tests.frameworks.hfrun  # noqa: F401

    target = {"torch": torch_loop, "hf": hf_trainer, "docs": docs_loop}[sys.argv[1]]
    mp.start_processes(target, args=(Path(sys.argv[2]), int(sys.argv[3])), nprocs=2, start_method="fork")
    print(json.dumps({"ok": True}))
