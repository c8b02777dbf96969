"""What a probe target returned, taken apart: where its batches of sample indices come from, and
which objects hear ``set_epoch`` before each epoch (as the HF Trainer, Lightning and DDP call it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from logdoctor.errors import ConfigError
from logdoctor.probing.usercode import call

#: What a target may return, for the one line that says it returned something else.
EXPECTED = (
    "a torch DataLoader, a Sampler or BatchSampler (with its dataset: return (sampler, dataset)), "
    "an HF Trainer, a Lightning DataModule, or an iterable of index batches"
)


@dataclass(frozen=True, slots=True)
class Feed:
    """The batches one process would train on, before any rank is simulated.

    Attributes:
        batches: a re-iterable of batches: index batches, single indices (cut into ``batch_size``),
            or samples themselves when ``stream`` is set (an IterableDataset).
        chain: the objects they come from, outermost first, in words.
        hooks: every distinct object with a ``set_epoch`` method along the chain.
        dataset: the data set, when known.
        batch_size: samples per batch, when the chain states it.
        drop_last: whether the batch sampler drops a short last batch.
        grad_accum: micro-batches per optimizer step the target states (HF Trainer), else 1.
        framework: ``hf``, ``lightning`` or ``torch``: how DDP would build each rank's sampler.
        stream: batches are cut from an IterableDataset's samples (no indices exist).
        samplers: the chain's objects, outermost first (for ranks and a ``lengths`` attribute).
    """

    batches: Any
    chain: str
    hooks: tuple[Any, ...] = ()
    dataset: Any = None
    batch_size: int | None = None
    drop_last: bool = False
    grad_accum: int = 1
    framework: str = "torch"
    stream: bool = False
    samplers: tuple[Any, ...] = field(default_factory=tuple)


def _torch_data() -> Any:
    """``torch.utils.data`` when torch is installed (a plain iterable of batches needs none)."""
    try:
        import torch.utils.data as data
    except ImportError:
        return None
    return data


def _name(obj: Any) -> str:
    """An object's class name, with the batch size when it states one."""
    size = getattr(obj, "batch_size", None)
    return type(obj).__name__ + (f"(batch_size={size})" if isinstance(size, int) else "")


def _is_loader(obj: Any) -> bool:
    data = _torch_data()
    return (data is not None and isinstance(obj, data.DataLoader)) or (
        hasattr(obj, "batch_sampler") and hasattr(obj, "dataset") and hasattr(obj, "sampler")
    )


def _is_iterable_dataset(obj: Any) -> bool:
    data = _torch_data()
    return data is not None and isinstance(obj, data.IterableDataset)


def _hooks(objects: Iterable[Any]) -> tuple[Any, ...]:
    seen: dict[int, Any] = {}
    for obj in objects:
        if obj is not None and callable(getattr(obj, "set_epoch", None)):
            seen.setdefault(id(obj), obj)
    return tuple(seen.values())


def _chain(objects: Iterable[Any]) -> tuple[Any, ...]:
    """Distinct non-None objects in order (a loader's ``sampler`` is often its batch sampler's)."""
    seen: dict[int, Any] = {}
    for obj in objects:
        if obj is not None:
            seen.setdefault(id(obj), obj)
    return tuple(seen.values())


def from_loader(loader: Any, framework: str = "torch", grad_accum: int = 1) -> Feed:
    """A DataLoader's batch sampler (never the loader itself, which would fetch and collate)."""
    dataset = loader.dataset
    if _is_iterable_dataset(dataset):
        size = getattr(loader, "batch_size", None)
        return Feed(
            dataset,
            f"{_name(loader)} > {type(dataset).__name__} (IterableDataset)",
            _hooks((loader, dataset)),
            dataset,
            size,
            bool(getattr(loader, "drop_last", False)),
            grad_accum,
            framework,
            stream=True,
            samplers=(dataset,),
        )
    bs = getattr(loader, "batch_sampler", None)
    inner = getattr(bs, "batch_sampler", None)  # accelerate's BatchSamplerShard wraps the real one
    base = getattr(inner if inner is not None else bs, "sampler", None)
    chain = _chain((bs, inner, base)) if bs is not None else _chain((getattr(loader, "sampler", None),))
    hooks = _hooks((loader, *chain, dataset))
    size = next((s for s in (getattr(o, "batch_size", None) for o in chain) if isinstance(s, int)), None)
    drop = bool(getattr(inner if inner is not None else bs, "drop_last", False))
    source = bs if bs is not None else loader.sampler
    words = " > ".join(_name(o) for o in (loader, *chain))
    return Feed(source, words, hooks, dataset, size, drop, grad_accum, framework, samplers=chain)


def _looks_like_dataset(obj: Any) -> bool:
    return (hasattr(obj, "__getitem__") and hasattr(obj, "__len__")) or _is_iterable_dataset(obj)


def from_sampler(sampler: Any, dataset: Any = None) -> Feed:
    """A Sampler or BatchSampler (or any iterable of index batches), with its data set when given
    or when the sampler holds it (``data_source``, ``dataset``)."""
    inner = getattr(sampler, "sampler", None)
    chain = _chain((sampler, inner, getattr(inner, "sampler", None)))
    if dataset is None:
        dataset = next(
            (
                d
                for o in chain
                for d in (getattr(o, "data_source", None), getattr(o, "dataset", None))
                if d is not None and _looks_like_dataset(d)
            ),
            None,
        )
    size = next((s for s in (getattr(o, "batch_size", None) for o in chain) if isinstance(s, int)), None)
    words = " > ".join(_name(o) for o in chain)
    return Feed(
        sampler,
        words,
        _hooks((*chain, dataset)),
        dataset,
        size,
        bool(getattr(sampler, "drop_last", False)),
        samplers=chain,
    )


def resolve(obj: Any, what: str = "the target") -> Feed:
    """The Feed of whatever a probe target returned.

    Raises:
        ConfigError: it is none of the supported kinds (the line names what was expected).
        UserCodeError: building the train DataLoader (a Trainer's, a DataModule's) raised.
    """
    if (
        isinstance(obj, tuple)
        and len(obj) == 2
        and _looks_like_dataset(obj[1])
        and hasattr(obj[0], "__iter__")
        and not isinstance(obj[0], list | tuple)
    ):  # (sampler, dataset), not two index batches
        return from_sampler(obj[0], obj[1])
    if callable(getattr(obj, "get_train_dataloader", None)):  # the HF Trainer
        loader = call("Trainer.get_train_dataloader()", obj.get_train_dataloader)
        accum = getattr(getattr(obj, "args", None), "gradient_accumulation_steps", 1)
        return from_loader(loader, "hf", accum if isinstance(accum, int) and accum >= 1 else 1)
    if callable(getattr(obj, "train_dataloader", None)) and not _is_loader(obj):  # Lightning
        if callable(getattr(obj, "setup", None)):
            call(f"{type(obj).__name__}.setup('fit')", lambda: obj.setup("fit"))
        loader = call(f"{type(obj).__name__}.train_dataloader()", obj.train_dataloader)
        return from_loader(loader, "lightning")
    if _is_loader(obj):
        return from_loader(obj)
    if _is_iterable_dataset(obj):
        raise ConfigError(
            f"{what} returned an IterableDataset; return the DataLoader over it "
            f"(its batch size is needed); expected {EXPECTED}"
        )
    if hasattr(obj, "__iter__") and not isinstance(obj, str | bytes | Mapping):
        return from_sampler(obj)
    raise ConfigError(f"{what} returned {type(obj).__name__}; expected {EXPECTED}")
