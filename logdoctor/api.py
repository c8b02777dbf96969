"""The Python API: ``analyze`` and ``compare`` on what a notebook holds, a thin face over the pipeline
as cli.py is. Options are the commands' (built by ``configfile.from_options``, the commands' own
function, with its defaults and its one-line errors); records in memory enter through ingest
(ingest.frames) like any other format."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, Never, Protocol, TypeAlias, overload

from logdoctor.compareresult import Comparison
from logdoctor.errors import ConfigError, InputError
from logdoctor.results import Report, Reports

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from logdoctor import model
    from logdoctor.config import AnalysisConfig

#: What ``analyze`` reads besides paths, for messages.
SOURCES = "a path, a list of paths, a polars or pandas DataFrame, a list of dicts (a log_history) or a trainer state"
#: The options of each entry point, as the commands name them (``--map`` is ``field_map``).
OPTIONS = ("config", "field_map", "steps_per_epoch", "select", "ignore", "stride", "max_memory")
OPTIONS_OF = {
    "analyze": (*OPTIONS, "jobs", "name"),
    "compare": ("force", *OPTIONS),
    "probe": ("config", "select", "ignore"),
}

Path = str | os.PathLike[str]


class TrainerStateLike(Protocol):
    """A trainer state: its ``log_history`` (transformers' ``TrainerState``; ``max_steps``,
    ``global_step`` and ``epoch`` are read too when it has them)."""

    log_history: list[dict[str, Any]]


#: One run in memory.
Records: TypeAlias = (
    "pl.DataFrame | pl.LazyFrame | pd.DataFrame | Sequence[Mapping[str, Any]] | Mapping[str, Any] | TrainerStateLike"
)


@overload
def analyze(
    source: Path,
    *,
    config: Path | None = None,
    field_map: Mapping[str, str] | Sequence[str] | None = None,
    steps_per_epoch: int | None = None,
    select: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    stride: int | None = None,
    max_memory: str | int | None = None,
    jobs: int | None = None,
    name: str | None = None,
    **unknown: Never,
) -> Report: ...


@overload
def analyze(
    source: list[Path] | tuple[Path, ...],
    *,
    config: Path | None = None,
    field_map: Mapping[str, str] | Sequence[str] | None = None,
    steps_per_epoch: int | None = None,
    select: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    stride: int | None = None,
    max_memory: str | int | None = None,
    jobs: int | None = None,
    name: str | None = None,
    **unknown: Never,
) -> Reports: ...


@overload
def analyze(
    source: Records,
    *,
    config: Path | None = None,
    field_map: Mapping[str, str] | Sequence[str] | None = None,
    steps_per_epoch: int | None = None,
    select: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    stride: int | None = None,
    max_memory: str | int | None = None,
    jobs: int | None = None,
    name: str | None = None,
    **unknown: Never,
) -> Report: ...


def analyze(
    source: object,
    *,
    config: Path | None = None,
    field_map: Mapping[str, str] | Sequence[str] | None = None,
    steps_per_epoch: int | None = None,
    select: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    stride: int | None = None,
    max_memory: str | int | None = None,
    jobs: int | None = None,
    name: str | None = None,
    **unknown: Never,
) -> Report | Reports:
    """Diagnose a training run, as ``logdoctor analyze`` does.

    Args:
        source: a log's path (a file, a run folder, an MLflow run address), a polars or pandas
            DataFrame of metric rows (W&B ``run.history()``), a list of dicts (``log_history``),
            a trainer state (``trainer.state``), or a list of paths (one report each).
        config: the config file (default: the nearest logdoctor.toml or [tool.logdoctor]).
        field_map: where a column is, ``{"loss": "objective"}`` (``--map loss=objective``).
        steps_per_epoch, select, ignore, stride, max_memory: as the command's options.
        jobs: processes for a list of paths (default: as the command chooses).
        name: what to call records in memory in the report (default ``DataFrame``, ``records``...).

    Returns:
        A Report; a Reports for a list of paths.

    Raises:
        LogdoctorError: InputError, ParseError or ConfigError with the command's one-line message.
    """
    _refuse(unknown, "analyze")
    cfg = _config(config, field_map, steps_per_epoch, select, ignore, stride, max_memory)
    if _is_paths(source):
        if name is not None:
            raise ConfigError("name: names records in memory; each path names its own report")
        return _reports([os.fspath(p) for p in source], cfg, jobs)  # type: ignore[attr-defined]
    return Report(_one(source, cfg, name))


def compare(
    baseline: object,
    *candidates: object,
    force: bool = False,
    config: Path | None = None,
    field_map: Mapping[str, str] | Sequence[str] | None = None,
    steps_per_epoch: int | None = None,
    select: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    stride: int | None = None,
    max_memory: str | int | None = None,
    **unknown: Never,
) -> Comparison:
    """Did the fix work, and what did it cost? A baseline run against candidates (``logdoctor compare``).

    Each run is anything ``analyze`` reads as one run, or a Report it made. Records in memory are
    named ``baseline`` and ``candidate`` (``candidate 2``...) unless analysed with a ``name`` first.
    ``force`` compares runs that do not look like the same experiment.

    Raises:
        LogdoctorError: as ``analyze``; InputError when the runs are not comparable (unless ``force``).
    """
    from logdoctor.comparison.build import compare_analysed

    _refuse(unknown, "compare")
    cfg = _config(config, field_map, steps_per_epoch, select, ignore, stride, max_memory)
    names = ["baseline", *(f"candidate{f' {i}' if i > 1 else ''}" for i in range(1, len(candidates) + 1))]
    reports = [_own(run, cfg, label) for run, label in zip((baseline, *candidates), names, strict=True)]
    return Comparison(compare_analysed(reports[0], reports[1:], force=force))


def probe(
    target: object,
    *,
    lengths: object = None,
    length_key: str | None = None,
    epochs: int = 3,
    world_size: int = 1,
    grad_accum: int | None = None,
    batch_size: int | None = None,
    max_batches: int | None = None,
    set_epoch: bool = True,
    seed: int | None = None,
    args: Mapping[str, Any] | None = None,
    config: Path | None = None,
    select: str | Sequence[str] | None = None,
    ignore: str | Sequence[str] | None = None,
    **unknown: Never,
) -> Report:
    """Walk a training pipeline's sampler for a few epochs (batch indices only) and diagnose its batches
    as ``analyze`` diagnoses a log (``logdoctor probe``): ``report.sampler`` adds padding and tokens per
    batch, recurrence across epochs against chance and the fix priced on these lengths.

    ``target`` is a torch DataLoader, a Sampler/BatchSampler (or ``(sampler, dataset)``), an HF Trainer,
    a Lightning DataModule, any iterable of index batches, or ``"path/to/train.py:function"`` (called
    with ``args``). The walk's keywords are ``logdoctor.probing.api.probe``'s; ``config``, ``select`` and
    ``ignore`` are ``analyze``'s.

    Raises:
        LogdoctorError: a target that cannot be walked, a bad option (the command's one-line message).
    """
    from logdoctor.probing.api import MAX_BATCHES
    from logdoctor.probing.api import probe as walk

    _refuse(unknown, "probe")
    cfg = _config(config, None, None, select, ignore, None, None)
    return Report(
        walk(
            target,
            lengths=lengths,  # type: ignore[arg-type]
            length_key=length_key,
            epochs=epochs,
            world_size=world_size,
            grad_accum=grad_accum,
            batch_size=batch_size,
            max_batches=MAX_BATCHES if max_batches is None else max_batches,
            set_epoch=set_epoch,
            seed=seed,
            args=args,
            config=cfg,
        )
    )


def assert_sampler_ok(report_or_target: object, *, allow: tuple[str, ...] = (), **probe_options: Any) -> Report:
    """Assert that a sampler recomposes its batches every epoch in a random length order (its verdict is
    none of ``sorted``, ``static``, ``grouped``, save those in ``allow``), for a pipeline's own tests::

        def test_sampler_reshuffles():
            logdoctor.assert_sampler_ok(make_loader())

    ``report_or_target`` is a Report of ``probe``, or what ``probe`` takes (probed with ``probe_options``).

    Raises:
        AssertionError: the verdict blames the sampler; the message is the verdict and its summary.
    """
    from logdoctor.probing.api import assert_sampler_ok as check

    report = report_or_target if isinstance(report_or_target, Report) else probe(report_or_target, **probe_options)
    check(report._report, allow=allow)
    return report


def _own(run: object, cfg: AnalysisConfig, label: str) -> model.Report:
    if isinstance(run, Report):
        return run._report
    if _is_paths(run):
        raise InputError(f"{label}: a list of paths names several runs; compare takes one run per argument")
    return _one(run, cfg, None if isinstance(run, str | os.PathLike) else label)


def _one(source: object, cfg: AnalysisConfig, name: str | None) -> model.Report:
    """The report of one run: a path (which must name one run) or records in memory."""
    from logdoctor import pipeline
    from logdoctor.ingest.frames import is_records

    if isinstance(source, str | os.PathLike):
        if name is not None:
            raise ConfigError("name: names records in memory; a path names its own report")
        path = os.fspath(source)
        found = pipeline.expand_inputs([path])
        if len(found) != 1:
            raise InputError(f"{path}: names {len(found)} runs; analyze([{path!r}]) gives one report each")
        run = pipeline.load(
            found[0],
            fields=cfg.fields,
            steps_per_epoch=cfg.steps_per_epoch,
            max_memory=cfg.max_memory,
            stride=cfg.stride,
        )
    else:
        if not is_records(source):
            got = "an empty list" if isinstance(source, list | tuple) and not source else type(source).__name__
            raise InputError(f"expected {SOURCES}; got {got}")
        run = pipeline.load_records(
            source,
            name or _default_name(source),
            fields=cfg.fields,
            steps_per_epoch=cfg.steps_per_epoch,
            stride=cfg.stride,
        )
    return pipeline.analyze(run, cfg)


def _reports(paths: list[str], cfg: AnalysisConfig, jobs: int | None) -> Reports:
    """The reports of several inputs as the command makes them (files found in a folder that hold
    no steps skipped); InputError when none could be analysed."""
    from logdoctor import pipeline

    if jobs is not None and (not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1):
        raise ConfigError(f"--jobs must be a positive integer, got {jobs!r}")
    outcomes = [o for o in pipeline.analyze_paths(paths, cfg, jobs) if not o.skipped]
    if not any(o.report for o in outcomes):
        first = next((o.error for o in outcomes if o.error), "no input")
        raise InputError(f"{first}" + (f" (and {len(outcomes) - 1} more inputs failed)" if len(outcomes) > 1 else ""))
    return Reports(outcomes)


def _config(
    config: Path | None,
    field_map: Mapping[str, str] | Sequence[str] | None,
    steps_per_epoch: int | None,
    select: str | Sequence[str] | None,
    ignore: str | Sequence[str] | None,
    stride: int | None,
    max_memory: str | int | None,
) -> AnalysisConfig:
    """The AnalysisConfig of the options, through the commands' own function (values spelled as
    on the command line: ``--map`` entries, lists of codes, sizes and strides as text)."""
    from logdoctor import configfile

    if isinstance(field_map, Mapping):
        field_map = [f"{k}={v}" for k, v in field_map.items()]
    return configfile.from_options(
        os.fspath(config) if config is not None else None,
        _texts(field_map, "--map"),
        steps_per_epoch,
        _texts(select, "--select"),
        _texts(ignore, "--ignore"),
        max_memory=None if max_memory is None else str(max_memory),
        stride=None if stride is None else str(stride),
        note=_warn,
    )


def _warn(text: str) -> None:
    """A note of the configuration (a file passed over) as a warning at the caller's line: the first
    frame outside logdoctor."""
    frame: FrameType | None = sys._getframe(1)
    level = 2
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("logdoctor"):
        frame, level = frame.f_back, level + 1
    warnings.warn(f"logdoctor: {text}", stacklevel=level)


def _texts(value: object, what: str) -> list[str] | None:
    """An option's values as the command line gives them: a string is one value."""
    if value is None or isinstance(value, str):
        return None if value is None else [value]
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"{what}: expected a string or a list of strings, got {value!r}")


def _refuse(unknown: Mapping[str, Any], where: str) -> None:
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise ConfigError(f"{where}: unknown option {names} (options: {', '.join(OPTIONS_OF[where])})")


def _is_paths(source: object) -> bool:
    """A list (or tuple) of paths, not empty: several inputs, one report each."""
    return isinstance(source, list | tuple) and bool(source) and all(isinstance(p, str | os.PathLike) for p in source)


def _default_name(source: object) -> str:
    """How records in memory are named in the report: by their kind."""
    from logdoctor.ingest.frames import is_pandas

    if is_pandas(source) or type(source).__name__ in ("DataFrame", "LazyFrame"):
        return "DataFrame"
    if isinstance(source, Sequence):
        return "records"
    return "trainer_state"
