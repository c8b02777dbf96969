"""The only entry points the CLI uses: load(path) -> Run and analyze(run, cfg) -> Report."""

from __future__ import annotations

import dataclasses

import numpy as np

from logdoctor import codes
from logdoctor.aliases import FieldMap
from logdoctor.analyzers import ANALYZERS
from logdoctor.analyzers.batching import BatchingDiagnosis
from logdoctor.config import AnalysisConfig
from logdoctor.errors import ConfigError
from logdoctor.model import ACC, EPOCH, LOSS, STEP, Artifacts, Finding, Report, Run, SeriesSummary
from logdoctor.parsers import get_parser, sniff
from logdoctor.sources import open_source
from logdoctor.structure import build_run


def load(
    path: str,
    *,
    fields: FieldMap | None = None,
    steps_per_epoch: int | None = None,
    fmt: str | None = None,
) -> Run:
    """Read a log (path, directory or "-" for stdin) into a validated Run.

    Raises:
        InputError / ParseError: the input cannot be read or holds no training steps.
    """
    source = open_source(path)
    parser = get_parser(fmt) if fmt else sniff(source)
    result = parser.parse(source, fields or FieldMap())
    return build_run(result, source.name, parser.name, steps_per_epoch)


def summarize(run: Run) -> SeriesSummary:
    """The run at a glance (the JSON ``series`` block)."""
    t = run.table
    loss = t[LOSS].to_numpy()
    spe = run.meta.steps_per_epoch
    first = int(t[STEP][0]) if t.height else None
    last = int(t[STEP][-1]) if t.height else None
    epochs: float | None = None
    if run.has(EPOCH):
        epochs = float(t[EPOCH].max())  # type: ignore[arg-type]
    elif spe and first is not None and last is not None:
        epochs = round((last - first + 1) / spe, 2)
    return SeriesSummary(
        steps=t.height,
        first_step=first,
        last_step=last,
        has_acc=run.has(ACC),
        has_length_stats=run.has_length_stats,
        steps_per_epoch=spe,
        epochs=epochs,
        resumes=run.meta.resumes,
        duplicate_steps=run.meta.overwritten_steps + run.meta.duplicate_steps,
        nonfinite_loss_steps=int((~np.isfinite(loss)).sum()),
        columns=tuple(c for c in t.columns if run.has(c)),
    )


def analyze(run: Run, cfg: AnalysisConfig | None = None) -> Report:
    """Run every detector and the batching diagnosis over a Run.

    Raises:
        ConfigError: a detector option is unknown or has a bad value.
    """
    cfg = cfg or AnalysisConfig()
    if cfg.steps_per_epoch and cfg.steps_per_epoch != run.meta.steps_per_epoch:
        run = dataclasses.replace(run, meta=dataclasses.replace(run.meta, steps_per_epoch=cfg.steps_per_epoch))
    findings: list[Finding] = []
    artifacts: dict[str, object] = {}
    for cls in ANALYZERS:
        try:
            detector = cls(**cfg.options_for(cls.name))
        except TypeError as err:
            raise ConfigError(f"bad option for detector {cls.name!r}: {err}") from None
        detection = detector.analyze(run)
        findings.extend(detection.findings)
        artifacts.update(detection.artifacts)
    options = cfg.options_for(BatchingDiagnosis.name)
    diagnosis = BatchingDiagnosis(**options).diagnose(run, findings)  # type: ignore[arg-type]
    findings.extend(diagnosis.findings)
    artifacts.update(diagnosis.artifacts)
    kept = codes.select(findings, cfg.select, cfg.ignore)
    kept.sort(key=lambda f: (-f.severity, f.first_step if f.first_step is not None else -1, f.code))
    return Report(
        run=run,
        series=summarize(run),
        verdict=diagnosis.verdict,
        findings=tuple(kept),
        artifacts=Artifacts(**artifacts),  # type: ignore[arg-type]
    )
