"""``probe``: walk a sampler's batches and diagnose them as ``analyze`` diagnoses a log; the Python API."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from logdoctor.config import AnalysisConfig
from logdoctor.errors import ConfigError
from logdoctor.model import Report
from logdoctor.probing import lengths as length_table
from logdoctor.probing.batches import StreamIds
from logdoctor.probing.feed import resolve
from logdoctor.probing.ranks import lanes
from logdoctor.probing.rngstate import preserved, seed_all
from logdoctor.probing.source import to_run
from logdoctor.probing.summary import with_profile
from logdoctor.probing.walk import MAX_BATCHES, Settings, Walker


@dataclass(frozen=True, slots=True)
class ProbeOptions:
    """Everything a probe takes besides its target (the CLI's options, the API's keywords).

    Attributes:
        lengths: per-sample lengths, a function of the sample index, or a lengths file.
        length_key: the column or sample feature whose ``len()`` is a sample's length.
        world_size: ranks to simulate.
        grad_accum: micro-batches per optimizer step (default: what the target states, else 1).
        seed: seed the global generators first (default: leave the user's seeding alone).
        walk: epochs, bound, ``set_epoch``, batch size.
    """

    lengths: length_table.LengthsGiven | None = None
    length_key: str | None = None
    world_size: int = 1
    grad_accum: int | None = None
    seed: int | None = None
    walk: Settings = field(default_factory=Settings)

    def __post_init__(self) -> None:
        for name, value, low in (
            ("epochs", self.walk.epochs, 1),
            ("max_batches", self.walk.max_batches, 1),
            ("world_size", self.world_size, 1),
            ("grad_accum", self.grad_accum, 1),
            ("batch_size", self.walk.batch_size, 1),
        ):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
                raise ConfigError(f"probe: {name} must be an integer >= {low}, got {value!r}")


def diagnose(obj: Any, name: str, options: ProbeOptions, cfg: AnalysisConfig | None = None) -> Report:
    """The report on what ``obj`` (a DataLoader, sampler, Trainer ... as ``probe`` takes) feeds:
    walked, turned into a Run, analysed by the pipeline, its fix priced on the samples' lengths.

    Raises:
        ConfigError: ``obj`` is not something a probe reads, or an option does not fit it.
        UserCodeError: the user's code raised while it was walked (file and line named).
    """
    from logdoctor import pipeline

    if options.seed is not None:
        seed_all(options.seed)
    feed = resolve(obj, name)
    if options.grad_accum is not None:
        feed = dataclasses.replace(feed, grad_accum=options.grad_accum)
    ways = lanes(feed, options.world_size)
    table = length_table.find(feed, options.lengths, options.length_key)
    stream = StreamIds(options.length_key) if feed.stream else None
    settings = dataclasses.replace(options.walk, grad_accum=feed.grad_accum)
    walked = Walker(ways, table, stream, settings, feed.batch_size, feed.drop_last).run()
    if walked.steps == 0:
        raise ConfigError(f"{name}: the sampler yielded no batch ({feed.chain})")
    report = pipeline.analyze(to_run(walked, name), cfg)
    return with_profile(report, walked, feed, ways, table, settings, name)


def probe(
    target: Any,
    *,
    lengths: length_table.LengthsGiven | None = None,
    length_key: str | None = None,
    epochs: int = 3,
    world_size: int = 1,
    grad_accum: int | None = None,
    batch_size: int | None = None,
    max_batches: int = MAX_BATCHES,
    set_epoch: bool = True,
    seed: int | None = None,
    args: Mapping[str, Any] | None = None,
    config: AnalysisConfig | None = None,
) -> Report:
    """Walk a training pipeline's sampler for a few epochs (batch indices only: nothing is collated,
    tokenised or trained) and diagnose its batches as ``logdoctor analyze`` diagnoses a log.

    Args:
        target: a torch DataLoader, a Sampler or BatchSampler (or ``(sampler, dataset)``), an HF
            Trainer, a Lightning DataModule, any iterable of index batches, or a string
            ``"path/to/train.py:function"`` / ``"package.module:function"`` naming a function that
            returns one (called with ``args``).
        lengths: each sample's length (a sequence indexed by sample index, a function of the
            index, or a lengths file); by default a ``lengths`` attribute of the sampler, a
            ``length_key`` column, or each sample's ``input_ids``.
        length_key: the column or sample feature whose ``len()`` is the length.
        epochs: epochs to walk.
        world_size: ranks to simulate, each with its sampler as DDP would build it.
        grad_accum: micro-batches per optimizer step (default: the Trainer's, else 1).
        batch_size: cuts a sampler of single indices into batches.
        max_batches: stop after this many batches (an endless sampler); the report says so.
        set_epoch: call ``set_epoch(epoch)`` before each epoch, as training loops do.
        seed: seed the global generators first; by default they are left as they are, and in any
            case put back as they were when the probe returns.
        args: keyword arguments of the target function (string targets only).
        config: thresholds and rule selection, as ``analyze`` takes them.

    Returns:
        The Report: the batching verdict and findings, and ``report.sampler`` (padding and tokens per
        batch, recurrence across epochs against chance, the fix priced on these lengths).
    """
    options = ProbeOptions(
        lengths, length_key, world_size, grad_accum, seed, Settings(epochs, max_batches, 1, set_epoch, batch_size)
    )
    with preserved():
        if isinstance(target, str):
            from logdoctor.probing.target import load_target

            if seed is not None:
                seed_all(seed)
            return diagnose(load_target(target, args), target, options, config)
        if args:
            raise ConfigError("probe: args= are for a target named as a string ('train.py:function')")
        return diagnose(target, type(target).__name__, options, config)


#: Verdicts that blame the sampler.
FAULTS = ("sorted", "static", "grouped")


def assert_sampler_ok(report_or_target: Any, *, allow: tuple[str, ...] = (), **kwargs: Any) -> Report:
    """Assert that a sampler recomposes its batches every epoch in a random length order: its
    verdict is none of ``sorted``, ``static`` or ``grouped`` (save those in ``allow``, e.g.
    ``("grouped",)`` for a deliberate ``group_by_length``). For a pipeline's own test suite::

        def test_sampler_reshuffles():
            assert_sampler_ok(make_loader(), lengths=lengths)

    Args:
        report_or_target: a probe's Report, or what ``probe`` takes (probed with ``kwargs``).

    Returns:
        The report, for further checks.

    Raises:
        AssertionError: the verdict blames the sampler; the message is the verdict and its summary.
    """
    report = report_or_target if isinstance(report_or_target, Report) else probe(report_or_target, **kwargs)
    v = report.verdict
    if v.batching in FAULTS and v.batching not in allow:
        raise AssertionError(f"{report.meta.path}: {v.batching} batching ({v.confidence_text}): {v.summary}")
    return report
