"""Simulate ``--world-size N``: each rank's batches as DDP would build them, one step = every rank's batch."""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import zip_longest
from typing import Any

from logdoctor.errors import ConfigError
from logdoctor.probing.feed import Feed


@dataclass(frozen=True, slots=True)
class Lanes:
    """Where each rank's batches come from.

    Attributes:
        sources: one re-iterable of batches per rank, or a single one dealt to ``deal`` ranks.
        hooks: the objects to call ``set_epoch`` on before each epoch (every rank's).
        deal: 1 when ``sources`` are the ranks; N when one source's batches go to N ranks in turn.
        how: the simulation in words (``""`` for one process).
    """

    sources: tuple[Any, ...]
    hooks: tuple[Any, ...]
    deal: int = 1
    how: str = ""

    @property
    def world_size(self) -> int:
        """Ranks simulated."""
        return self.deal if self.deal > 1 else len(self.sources)

    def steps(self, read: Callable[[Any], Iterator[Any]]) -> Iterator[list[Any]]:
        """One epoch: per step, the batch of every rank (a rank whose batches ran out is left out);
        ``read`` turns a source into its batches (cutting single indices, a stream's samples)."""
        if self.deal > 1:
            group: list[Any] = []
            for batch in read(self.sources[0]):
                group.append(batch)
                if len(group) == self.deal:
                    yield group
                    group = []
            if group:
                yield group
            return
        for step in zip_longest(*(read(s) for s in self.sources)):
            yield [b for b in step if b is not None]


def _distributed(obj: Any) -> bool:
    try:
        from torch.utils.data import DistributedSampler
    except ImportError:
        return False
    return isinstance(obj, DistributedSampler)


def _for_rank(sampler: Any, world: int, rank: int) -> Any:
    """A copy of a DistributedSampler for ``rank`` of ``world`` (its sizes computed as its own
    ``__init__`` computes them)."""
    out = copy.copy(sampler)
    out.num_replicas, out.rank = world, rank
    n = len(out.dataset)
    if getattr(out, "drop_last", False) and n % world:
        out.num_samples = math.ceil((n - world) / world)
    else:
        out.num_samples = math.ceil(n / world)
    out.total_size = out.num_samples * world
    return out


def _rewrap(chain: tuple[Any, ...], index: int, new: Any) -> list[Any]:
    """``chain[:index + 1]`` rebuilt with ``chain[index]`` replaced by ``new``: each wrapper above
    it copied and pointed at the copy below, outermost first."""
    built = [new]
    for i in range(index - 1, -1, -1):
        parent = copy.copy(chain[i])
        for attr in ("sampler", "batch_sampler"):
            if getattr(parent, attr, None) is chain[i + 1]:
                setattr(parent, attr, built[0])
        built.insert(0, parent)
    return built


def _plain_shuffle(feed: Feed) -> bool:
    """A torch BatchSampler over a RandomSampler or SequentialSampler of a sized data set: the
    loader DDP scripts and Lightning give each rank a DistributedSampler of."""
    try:
        from torch.utils.data import BatchSampler, RandomSampler, SequentialSampler
    except ImportError:  # no torch: no torch sampler to replace
        return False
    chain = feed.samplers
    return (
        len(chain) == 2
        and type(chain[0]) is BatchSampler
        and type(chain[1]) in (RandomSampler, SequentialSampler)
        and feed.dataset is not None
        and hasattr(feed.dataset, "__len__")
    )


def lanes(feed: Feed, world: int) -> Lanes:
    """The ranks of ``feed`` at ``world`` processes.

    A DistributedSampler in the chain is copied for each rank; a plain shuffling (or sequential)
    loader gets each rank a ``DistributedSampler(seed=0)`` as Lightning and DDP scripts build it;
    an HF Trainer's batches, a custom batch sampler's and a plain iterable's are dealt to the ranks
    in turn, as accelerate shards a batch sampler.

    Raises:
        ConfigError: ranks of an IterableDataset (each rank's stream is the data set's own choice).
    """
    if world == 1:
        return Lanes((feed.batches,), feed.hooks)
    if feed.stream:
        raise ConfigError(
            "--world-size with an IterableDataset: how it splits its stream across ranks is the "
            "data set's own code; probe one rank's stream (world size 1)"
        )
    chain = feed.samplers
    where = next((i for i, o in enumerate(chain) if _distributed(o)), None)
    if where is not None:
        built = [_rewrap(chain, where, _for_rank(chain[where], world, r)) for r in range(world)]
        hooks = [o for b in built for o in b if callable(getattr(o, "set_epoch", None))]
        hooks += [h for h in feed.hooks if all(h is not o for o in chain)]
        return Lanes(
            tuple(b[0] for b in built),
            tuple(hooks),
            how=f"the {type(chain[where]).__name__} copied for each of {world} ranks",
        )
    if feed.framework != "hf" and _plain_shuffle(feed):
        from torch.utils.data import BatchSampler, DistributedSampler, RandomSampler

        shuffle = type(chain[1]) is RandomSampler
        seed = int(os.environ.get("PL_GLOBAL_SEED", 0)) if feed.framework == "lightning" else 0
        ranks: list[Any] = [
            DistributedSampler(feed.dataset, num_replicas=world, rank=r, shuffle=shuffle, seed=seed)
            for r in range(world)
        ]
        sources = tuple(BatchSampler(s, chain[0].batch_size, chain[0].drop_last) for s in ranks)
        return Lanes(
            sources,
            tuple(ranks),
            how=f"each of {world} ranks given a DistributedSampler(shuffle="
            f"{shuffle}, seed={seed}) in place of the {type(chain[1]).__name__}, as DDP and Lightning do",
        )
    return Lanes(
        (feed.batches,),
        feed.hooks,
        deal=world,
        how=f"the batches dealt to {world} ranks in turn, as accelerate shards a batch sampler",
    )
