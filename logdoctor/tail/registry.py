"""Pick tail mode's detectors from the registries: cheap ones per update, the rest on a schedule."""

from __future__ import annotations

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

    def heavy(run: Run) -> HeavyResult:
        report = pipeline.analyze(run, cfg)
        return report.findings, report.verdict

    return cheap, heavy
