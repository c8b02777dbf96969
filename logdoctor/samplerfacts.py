"""What a probe of the sampler adds to a Report: the contract shared by ``logdoctor.probe`` and the renderers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Spread:
    """One per-batch quantity over every batch walked.

    Attributes:
        mean / median: its mean and median.
        p5 / p95: its 5th and 95th percentiles.
        low / high: its smallest and largest value.
    """

    mean: float
    median: float
    p5: float
    p95: float
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class FixPrice:
    """The fix priced on the walked samples' own lengths, as ``logdoctor buckets`` prices it.

    Attributes:
        buckets / boundaries: the recommended buckets (upper bounds, inclusive).
        token_budget: padded tokens per batch the packing simulation allows (the 95th percentile
            of what this sampler's batches reached, at least the longest sample).
        sequences: samples priced (every distinct sample the walk saw).
        efficiency_random / _sorted / _bucketed: padding efficiency (real / padded tokens) of
            token-budget batches in random order, sorted, and as a bucketed shuffle.
        bucketed_vs_sorted / bucketed_vs_random: the bucketed shuffle's real-token throughput
            against sorted and random batching.
        bucketed_vs_this: against this sampler's own batches (ratio of padding efficiencies).
    """

    buckets: int
    boundaries: tuple[int, ...]
    token_budget: int
    sequences: int
    efficiency_random: float
    efficiency_sorted: float
    efficiency_bucketed: float
    bucketed_vs_sorted: float
    bucketed_vs_random: float
    bucketed_vs_this: float | None


@dataclass(frozen=True, slots=True)
class SamplerProfile:
    """What only walking the sampler shows: the batches as the model would get them, before training.

    Attributes:
        target: what was probed (``train.py:build_loader``, or the object's type for the Python API).
        chain: the objects the batches came from, outermost first (``DataLoader > BatchSampler(16)
            > RandomSampler``).
        samples: the data set's size, when it has one.
        epochs: epochs walked (a partial last one counts).
        batches: batches read, every rank's and micro-batch counted.
        steps: optimizer steps they make (rows of the run).
        world_size / ranks: ranks simulated and how (``""`` for one).
        grad_accum: micro-batches per optimizer step.
        set_epoch: the objects whose ``set_epoch`` was called before each epoch.
        bounded: the walk stopped at ``max_batches`` before its last epoch ended.
        max_batches: the bound.
        lengths_source: where sample lengths came from (``""``: none; only composition is judged).
        efficiency: real tokens / padded tokens over every batch (None without lengths).
        padding: per-batch padding efficiency; tokens / padded: real and padded tokens per batch.
        recurrence_by_epoch: per epoch, the share of its batches already drawn in an earlier epoch.
        recurrence: that share over every epoch after the first (None with one epoch).
        recurrence_chance: the share a uniform reshuffle would repeat by chance.
        batch_size: the most common batch size (samples per rank and micro-batch).
        fix: the bucketed shuffle priced on these lengths (None without lengths).
        notes: what the walk could not do or had to assume, in words.
    """

    target: str
    chain: str
    samples: int | None
    epochs: int
    batches: int
    steps: int
    world_size: int = 1
    ranks: str = ""
    grad_accum: int = 1
    set_epoch: tuple[str, ...] = ()
    bounded: bool = False
    max_batches: int = 0
    lengths_source: str = ""
    efficiency: float | None = None
    padding: Spread | None = None
    tokens: Spread | None = None
    padded: Spread | None = None
    recurrence_by_epoch: tuple[float, ...] = ()
    recurrence: float | None = None
    recurrence_chance: float | None = None
    batch_size: int | None = None
    fix: FixPrice | None = None
    notes: tuple[str, ...] = ()
