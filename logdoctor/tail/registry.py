"""Pick tail mode's detectors from the registries: cheap ones per update, the rest on a schedule."""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Mapping

from logdoctor import pipeline
from logdoctor.config import AnalysisConfig
from logdoctor.detectors import ANALYZERS
from logdoctor.detectors.base import Analyzer
from logdoctor.model import Run
from logdoctor.options import check_options
from logdoctor.tail.session import HeavyFn, HeavyResult, SessionOptions

#: Registry names of detectors whose findings depend on a local window only, cheap enough to run
#: on every update (NaN/inf, spikes, divergence). Every registered detector also runs in the
#: scheduled heavy pass through ``pipeline.analyze``, so a name missing here only costs latency.
CHEAP = frozenset({"nonfinite", "nan", "spikes", "spike", "divergence"})

#: The significance levels of the tests that the heavy pass repeats on ever longer prefixes:
#: detector (or diagnosis) name -> its keyword options that are a level (p-value threshold).
LEVELS: Mapping[str, tuple[str, ...]] = {
    "periodicity": ("alpha",),
    "spikes": ("alpha", "null_alpha"),
    "fp16_overflows": ("alpha",),
    "memorization": ("alpha",),
    "batching": ("max_p",),
}


def spent(level: float, look: int) -> float:
    """The level of the ``look``-th test (1-based) when ``level`` is spent over every look:
    ``level * 6 / (pi^2 * look^2)``, whose sum over all looks is ``level`` (a Bonferroni bound
    that holds however many times a growing run is looked at, correlated looks included)."""
    return level * 6.0 / (math.pi**2 * look**2)


def _classes() -> dict[str, Callable[..., object]]:
    from logdoctor.diagnosis.batching import BatchingDiagnosis

    out: dict[str, Callable[..., object]] = {cls.name: cls for cls in ANALYZERS}
    out[BatchingDiagnosis.name] = BatchingDiagnosis
    return out


def spent_config(cfg: AnalysisConfig, look: int) -> AnalysisConfig:
    """``cfg`` with every level of ``LEVELS`` (the configured one, else the default) spent for
    the ``look``-th pass."""
    classes = _classes()
    options = {name: dict(opts) for name, opts in cfg.options.items()}
    for name, keys in LEVELS.items():
        cls = classes.get(name)
        if cls is None:
            continue
        params = inspect.signature(cls).parameters
        mine = options.setdefault(name, {})
        for key in keys:
            base = mine.get(key, params[key].default if key in params else None)
            if isinstance(base, int | float) and not isinstance(base, bool):
                mine[key] = spent(float(base), look)
    return dataclasses.replace(cfg, options=options)


@dataclasses.dataclass(frozen=True)
class PrefixAnalysis:
    """The heavy pass: ``pipeline.analyze`` of the rows so far, its levels spent over the looks
    (``look=None``: the plain batch analysis, for the final pass)."""

    cfg: AnalysisConfig
    spends_alpha: bool = True

    def __call__(self, run: Run, look: int | None = None) -> HeavyResult:
        cfg = self.cfg if look is None else spent_config(self.cfg, look)
        report = pipeline.analyze(run, cfg)
        return report.findings, report.verdict


def default_detectors(opts: SessionOptions) -> tuple[list[Analyzer], HeavyFn]:
    """The cheap detectors (instances, with the user's thresholds) and the heavy pass.

    Raises:
        ConfigError: a detector rejects its configured options.
    """
    cfg = AnalysisConfig(
        fields=opts.fields,
        steps_per_epoch=opts.steps_per_epoch,
        select=opts.select,
        ignore=opts.ignore,
        options=opts.options,
    )
    cheap: list[Analyzer] = []
    for cls in ANALYZERS:
        if cls.name in CHEAP:
            cheap.append(cls(**check_options(cls.name, cls.options, cfg.options_for(cls.name), "configuration")))
    return cheap, PrefixAnalysis(cfg)
