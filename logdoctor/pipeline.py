"""The only entry points the CLI uses: load, analyze, and analyze_paths for many inputs at once."""

from __future__ import annotations

import dataclasses
import glob
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from logdoctor import codes
from logdoctor.config import AnalysisConfig
from logdoctor.errors import InputError, LogdoctorError, ParseError
from logdoctor.exitcodes import ExitCode, gated_findings, should_fail
from logdoctor.ingest import bounded, memory, streaming
from logdoctor.ingest.aliases import FieldMap
from logdoctor.ingest.fleet import list_fleet, looks_like_log
from logdoctor.ingest.linefilter import LineFilter
from logdoctor.ingest.parsers import PARSERS, ParseResult, ensure_content, get_parser, sniff
from logdoctor.ingest.parsers.base import check_overrides
from logdoctor.ingest.remote import open_remote, scheme_of
from logdoctor.ingest.runfolders import run_folders
from logdoctor.ingest.sidecars import with_sidecar_plan
from logdoctor.ingest.sources import Source, open_source
from logdoctor.model import (
    ACC,
    BLOCK_STEPS,
    EPOCH,
    LINE_NO,
    LOSS,
    STEP,
    Artifacts,
    Check,
    Finding,
    ObjectiveSummary,
    Outcome,
    Report,
    Run,
    SeriesSummary,
)
from logdoctor.options import check_options
from logdoctor.structure import columns
from logdoctor.structure.beforefirst import stopped_before_first_step
from logdoctor.structure.build import build_run
from logdoctor.structure.stuck import StuckTracker

if TYPE_CHECKING:
    from logdoctor.ingest.mlflow_server import RunRef
    from logdoctor.ingest.mlflow_store import StoreAddress


def load(
    path: str,
    *,
    fields: FieldMap | None = None,
    steps_per_epoch: int | None = None,
    fmt: str | None = None,
    max_memory: int | None = None,
    stride: int | None = None,
    max_line: int | None = None,
) -> Run:
    """Read a log (path, directory or "-" for stdin) into a validated Run.

    A log larger than the in-memory limit of the memory budget (``max_memory`` bytes, else
    ``$LOGDOCTOR_MAX_MEMORY``, else half the available memory) is read in chunks and, when its
    steps do not fit, reduced to per-block aggregates; the run's notes say so (see streaming).
    ``stride``: optimizer steps per row of a log whose rows carry no step (``--stride``).
    Runs of NUL bytes are skipped and lines longer than ``max_line`` bytes (else $LOGDOCTOR_MAX_LINE,
    else 1 MiB) cut, in bounded memory; the run's metadata and notes say what (ingest/bounded.py).

    Raises:
        InputError / ParseError: the input cannot be read or holds no training steps.
        ConfigError: $LOGDOCTOR_MAX_MEMORY is not a size.
    """
    ref = _server_run(path)
    if ref is not None:  # an MLflow tracking server's run
        from logdoctor.ingest.parsers.mlflow_server import FORMAT as SERVER_FORMAT
        from logdoctor.ingest.parsers.mlflow_server import read_server_run

        result = read_server_run(ref, fields or FieldMap())
        return _with_facts(build_run(result, path, SERVER_FORMAT, steps_per_epoch, stride=stride), result)
    store = _store_run(path)
    if store is not None:  # a run of an MLflow sqlite store
        from logdoctor.ingest.mlflow_store import FORMAT as STORE_FORMAT
        from logdoctor.ingest.mlflow_store import read_store_run

        result = read_store_run(store, fields or FieldMap(), path)
        return _with_facts(build_run(result, path, STORE_FORMAT, steps_per_epoch, stride=stride), result)
    total = memory.budget(max_memory)
    limit = memory.in_memory_limit(total)
    source = open_remote(path, limit) if scheme_of(path) else open_source(path, limit=limit)
    source, filt = bounded.open_bounded(source, fmt, limit, max_line)
    large = _parse_large(source, fields or FieldMap(), total, fmt)
    if large is not None:
        return _filtered(build_run(large[0], source.name, large[1], steps_per_epoch, stride=stride), filt)
    if fmt:
        ensure_content(source)
    parser = get_parser(fmt) if fmt else sniff(source)
    result = parser.parse(source, fields or FieldMap())
    if source.path is not None and not source.is_dir:
        result = with_sidecar_plan(result, source.path)
    check_overrides(result, fields or FieldMap(), source.name)
    early = stopped_before_first_step(result, source.name, parser.name) if result.refusal is not None else None
    if early is not None:  # the run died before its first row: its failure is reported, not refused
        return _filtered(early, filt)
    run = _with_facts(build_run(result, source.name, parser.name, steps_per_epoch, stride=stride), result)
    return _filtered(run, filt)


def _parse_large(source: Source, fields: FieldMap, total: int, fmt: str | None) -> tuple[ParseResult, str] | None:
    """``streaming.parse_large``, with the stuck-counter rule applied to the records one by one as
    they stream past, so that a log reduced to blocks states the stuck counters its whole read would."""
    tracker = StuckTracker()
    large = streaming.parse_large(
        source, fields, total, fmt, on_rows=lambda t: tracker.feed(t[STEP].to_numpy(), t[LINE_NO].to_numpy())
    )
    if large is None or BLOCK_STEPS not in large[0].table.columns:
        return large
    return dataclasses.replace(large[0], stuck_counters=tracker.counters()), large[1]


def load_records(
    records: object,
    name: str,
    *,
    fields: FieldMap | None = None,
    steps_per_epoch: int | None = None,
    stride: int | None = None,
) -> Run:
    """Read records already in memory (a DataFrame, a list of dicts, a trainer state: ingest.frames)
    into a validated Run, as ``load`` reads a file; ``name`` stands for the path in the report.

    Raises:
        InputError / ParseError: not records, or no training steps in them.
        ConfigError: a ``fields`` override names no column of theirs.
    """
    from logdoctor.ingest.frames import parse_records

    result, fmt = parse_records(records, fields or FieldMap(), name)
    check_overrides(result, fields or FieldMap(), name)
    return _with_facts(build_run(result, name, fmt, steps_per_epoch, stride=stride), result)


def _filtered(run: Run, filt: LineFilter | None) -> Run:
    """The run with what the line filter skipped (NUL runs) and cut (long lines) in its metadata."""
    return run if filt is None else dataclasses.replace(run, meta=bounded.describe(run.meta, filt))


def _with_facts(run: Run, result: ParseResult) -> Run:
    """The run with the configuration facts its source stated (W&B config, MLflow params)."""
    if not result.config_facts:
        return run
    return dataclasses.replace(run, meta=dataclasses.replace(run.meta, config_facts=result.config_facts))


def _epochs_seen(epoch: np.ndarray) -> float | None:
    """Epochs a run covers: integer counters count their distinct values (0- or 1-based alike);
    fractional ones (HF's ``epoch`` = progress) are the progress reached."""
    if epoch.size == 0:
        return None
    if np.all(epoch == np.floor(epoch)):
        return float(epoch.max() - epoch.min() + 1)
    return round(float(epoch.max()), 2)


def summarize(run: Run) -> SeriesSummary:
    """The run at a glance (the JSON ``series`` block)."""
    t = run.table
    spe = run.meta.steps_per_epoch
    first = int(t[STEP][0]) if t.height else None
    last = int(t[STEP][-1]) if t.height else None
    epochs: float | None = None
    if run.has(EPOCH):
        epochs = _epochs_seen(t[EPOCH].drop_nulls().drop_nans().to_numpy())
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
        # a null loss is a row without a loss value, not a NaN/inf one (issue 28)
        nonfinite_loss_steps=int(t[LOSS].is_nan().sum()) + int(t[LOSS].is_infinite().sum()),
        columns=tuple(c for c in t.columns if run.has(c)),
        objectives=objective_summaries(run),
    )


def objective_summaries(run: Run) -> tuple[ObjectiveSummary, ...]:
    """Each loss part the log carries beside the analysed loss (:func:`logdoctor.vocab.is_loss_part`),
    at a glance: a log of several objectives is reported on each, not only on the one analysed."""
    from logdoctor import vocab
    from logdoctor.detectors.nonfinite import other_objectives

    out = []
    # the objectives first (``loss_0``, ``loss_kl``), their own parts after (``loss_disc_real_0``)
    for col in sorted(other_objectives(run), key=lambda c: len(vocab.normalize_key(c).split("_"))):
        v = run.table[col].drop_nulls().cast(pl.Float64).to_numpy()
        if v.size == 0:
            continue
        ok = v[np.isfinite(v)]
        tenth = max(1, ok.size // 10)
        first, last = (float(np.median(ok[:tenth])), float(np.median(ok[-tenth:]))) if ok.size else (None, None)
        out.append(ObjectiveSummary(col, int(v.size), first, last, int(v.size - ok.size)))
    return tuple(out)


def analyze(run: Run, cfg: AnalysisConfig | None = None) -> Report:
    """Run every detector and the batching diagnosis over a Run.

    A log holding several appended runs: the report is the last run's (headline, status, exit
    code) and ``Report.runs`` says what each run had, each analysed on its own.

    Raises:
        ConfigError: a detector option is unknown or has a bad value.
    """
    from logdoctor.diagnosis.runs import run_parts

    cfg = cfg or AnalysisConfig()
    report = _analyze_run(run, cfg)
    st = run.meta.structure
    if not run.earlier and not (st is not None and any(e.step is None for e in st.launches)):
        return report
    earlier = [_analyze_run(r, cfg) for r in run.earlier]
    return dataclasses.replace(report, runs=run_parts(earlier, report))


# statistics of values near the float limit (a loss of ±1e308) overflow to inf/nan, which the
# detectors take as "no evidence": numpy's warnings about it would only be noise on stderr
@np.errstate(all="ignore")
def _analyze_run(run: Run, cfg: AnalysisConfig) -> Report:
    """Every detector and the batching diagnosis over one run."""
    if run.table.height == 0:
        return _analyze_stepless(run, cfg)
    if cfg.steps_per_epoch and (cfg.steps_per_epoch, True) != (
        run.meta.steps_per_epoch,
        run.meta.steps_per_epoch_given,
    ):
        meta = dataclasses.replace(run.meta, steps_per_epoch=cfg.steps_per_epoch, steps_per_epoch_given=True)
        run = dataclasses.replace(run, meta=meta)
    try:
        return _analyze_table(run, cfg)
    finally:
        columns.release(run.table)  # the arrays read once for this analysis (structure/columns.py)


def _analyze_table(run: Run, cfg: AnalysisConfig) -> Report:
    """Every detector, then the diagnosis, over a run whose steps per epoch are settled."""
    # imported here: ``logdoctor parse`` loads a log and needs none of the analysis
    from logdoctor.detectors import ANALYZERS, lossweights, lrcause
    from logdoctor.diagnosis.batching import BatchingDiagnosis

    findings: list[Finding] = []
    artifacts: dict[str, object] = {}
    checks: list[Check] = []
    for cls in ANALYZERS:
        detector = cls(**check_options(cls.name, cls.options, cfg.options_for(cls.name), "configuration"))
        detection = detector.analyze(run)
        findings.extend(detection.findings)
        artifacts.update(detection.artifacts)
        checks.append(Check(cls.name, detection.skipped))
    findings = lrcause.attach(run, findings)  # a loss event at an lr change names it
    findings = lossweights.attach(run, findings)  # a total's rise that no part shares: the weights changed
    name = BatchingDiagnosis.name
    diagnoser = BatchingDiagnosis(
        **check_options(name, BatchingDiagnosis.options, cfg.options_for(name), "configuration")  # type: ignore[arg-type]
    )
    # the verdict weighs only the findings the report will show (selected, as configured)
    findings = codes.select(findings, cfg.select, cfg.ignore)
    diagnosis = diagnoser.diagnose(run, findings)
    checks.append(Check(name, diagnosis.skipped))
    # the diagnosis may explain some detector findings as symptoms of its verdict
    findings = [*(diagnosis.attributed or findings), *diagnosis.findings]
    artifacts.update(diagnosis.artifacts)
    kept = codes.select(findings, cfg.select, cfg.ignore)
    kept.sort(key=lambda f: (-f.severity, f.first_step if f.first_step is not None else -1, f.code))
    return Report(
        run=run,
        series=summarize(run),
        verdict=diagnosis.verdict,
        findings=tuple(kept),
        artifacts=Artifacts(**artifacts),  # type: ignore[arg-type]
        checks=tuple(checks),
    )


def _analyze_stepless(run: Run, cfg: AnalysisConfig) -> Report:
    """A run that died before its first logged step: how it ended is all there is to judge (the
    ending detector); every other check is skipped for want of a training row."""
    from logdoctor.detectors import ANALYZERS
    from logdoctor.detectors.base import NO_ROWS
    from logdoctor.detectors.ending import EndingDetector
    from logdoctor.diagnosis.batching import BatchingDiagnosis
    from logdoctor.diagnosis.verdicts import no_rows_verdict

    ending = EndingDetector(
        **check_options(EndingDetector.name, EndingDetector.options, cfg.options_for("ending"), "configuration")
    )
    findings = codes.select(list(ending.analyze(run).findings), cfg.select, cfg.ignore)
    checks = [Check(cls.name, "" if cls is EndingDetector else NO_ROWS) for cls in ANALYZERS]
    return Report(
        run=run,
        series=summarize(run),
        verdict=no_rows_verdict(),
        findings=tuple(sorted(findings, key=lambda f: (-f.severity, f.code))),
        checks=(*checks, Check(BatchingDiagnosis.name, NO_ROWS)),
    )


def is_run_dir(path: Path) -> bool:
    """True for a directory that is itself one run (MLflow run folder, TensorBoard log dir)."""
    source = Source(name=str(path), path=path, is_dir=True)
    return any(p.sniff(source) for p in PARSERS)


def _is_log_file(path: Path) -> bool:
    return looks_like_log(path.name) and path.is_file()


def expand_inputs(paths: Sequence[str]) -> list[str]:
    """Expand globs and directories into the inputs to analyse, in order, without repeats.

    A directory stands for the log files in it (and the run folders directly in it), unless it is
    itself a run folder; hidden files and MANIFEST/README/LICENSE/CHANGELOG files are left out.
    A glob that matches nothing, or an empty directory, stays as given so that loading it
    reports the problem. A fleet address (an MLflow experiment, a remote prefix ending in ``/`` or a
    remote glob) is listed here, once, into its runs (``ingest.fleet``).
    """
    return list(expand_entries(paths))


def _server_run(path: str) -> RunRef | None:
    """``mlflow_server.run_ref``, loaded only for an address (``scheme://``): every run or fleet
    address has one, and a small local log starts without the HTTP modules."""
    if "://" not in path:
        return None
    from logdoctor.ingest.mlflow_server import run_ref

    return run_ref(path)


def _store_run(path: str) -> StoreAddress | None:
    """The run of an MLflow sqlite store that ``path`` names, None for anything else.

    Raises:
        InputError: the store itself or one experiment of it, which are many runs (a fleet).
    """
    from logdoctor.ingest.mlflow_store import may_be_store, store_address

    if path == "-" or not may_be_store(path):
        return None
    addr = store_address(path)
    if addr is not None and not addr.run_id:
        raise InputError(
            f"{path}: an MLflow store holds many runs: analyze it as a fleet, or name one "
            "run (#/experiments/<id>/runs/<run id>)"
        )
    return addr


def expand_entries(paths: Sequence[str]) -> dict[str, bool]:
    """``expand_inputs`` with, per input, whether it was found inside a directory (True) rather
    than named or matched by a glob: such a file may be skipped when it holds no training steps."""
    out: dict[str, bool] = {}
    for p in paths:
        if p != "-" and (fleet := list_fleet(p)) is not None:  # an MLflow experiment, a remote prefix
            for address in fleet:
                out.setdefault(address, True)
            continue
        matches = sorted(glob.glob(p, recursive=True)) if glob.has_magic(p) else [p]
        for m in matches or [p]:
            path = Path(m)
            if m != "-" and path.is_dir() and (runs := run_folders(path)):
                for run in runs:  # a W&B folder or a TensorBoard dir of several runs
                    out.setdefault(str(run), True)
            elif m != "-" and path.is_dir() and not is_run_dir(path):
                inside = [str(c) for c in sorted(path.iterdir()) if _is_log_file(c) or (c.is_dir() and is_run_dir(c))]
                inside += [
                    str(r) for c in sorted(path.iterdir()) if c.is_dir() and not is_run_dir(c) for r in run_folders(c)
                ]  # a project folder's wandb/ (or TensorBoard log dir)
                for name in inside:
                    out.setdefault(name, True)
                if not inside:
                    out.setdefault(m, False)
            else:
                out[m] = False
    return out


def analyze_one(path: str, cfg: AnalysisConfig, in_dir: bool = False) -> Outcome:
    """Load and analyse one input; an expected error becomes an Outcome with exit code 2.

    A file found in a directory (``in_dir``) that holds no training steps (a parse error, or
    empty) is a ``skipped`` Outcome with exit code 0 instead.
    """
    try:
        run = load(
            path, fields=cfg.fields, steps_per_epoch=cfg.steps_per_epoch, max_memory=cfg.max_memory, stride=cfg.stride
        )
        report = analyze(run, cfg)
    except LogdoctorError as err:
        skip = in_dir and (isinstance(err, ParseError) or str(err).endswith(": file is empty"))
        code = ExitCode.OK if skip else ExitCode.BAD_INPUT
        return Outcome(path=path, report=None, error=str(err), exit_code=code, skipped=skip)
    failed = should_fail(gated_findings(report, cfg.runs), cfg.fail_on)
    return Outcome(path=path, report=report, exit_code=ExitCode.FINDINGS if failed else ExitCode.OK)


def worker_config(cfg: AnalysisConfig, workers: int) -> AnalysisConfig:
    """The configuration of one of ``workers`` parallel processes: each gets its share of the
    memory budget, so that together they stay within it."""
    return dataclasses.replace(cfg, max_memory=max(1, memory.budget(cfg.max_memory) // workers))


#: Input bytes that make a worker process worth its start-up (~1 s of imports): about 5 s of work.
BYTES_PER_WORKER = 64 * 2**20


def auto_jobs(inputs: Sequence[str]) -> int:
    """Worker processes for ``inputs`` when the user did not say: one per ``BYTES_PER_WORKER`` of
    input, no more than the cores not already busy (load average) nor the inputs; at least one.
    A sweep of small logs stays in one process, where spawned workers would cost more than they save.
    """
    total = 0
    for name in inputs:
        try:
            total += os.stat(name).st_size if name != "-" else 0
        except OSError:
            continue  # a missing input fails on its own later
    cpus = os.cpu_count() or 1
    busy = int(os.getloadavg()[0]) if hasattr(os, "getloadavg") else 0
    return max(1, min(cpus - busy, len(inputs), total // BYTES_PER_WORKER))


def analyze_paths(paths: Sequence[str], cfg: AnalysisConfig | None = None, jobs: int | None = None) -> list[Outcome]:
    """Analyse many inputs (paths, globs, directories), in parallel across ``jobs`` processes.

    One broken input does not stop the others: it comes back as an Outcome holding its error.
    Results keep the order of the expanded inputs.

    Args:
        paths: inputs as given on the command line.
        cfg: analysis configuration shared by every input.
        jobs: worker processes; None chooses (``auto_jobs``), 1 stays in this process.
    """
    cfg = cfg or AnalysisConfig()
    entries = expand_entries(paths)
    inputs = list(entries)
    workers = min(jobs or auto_jobs(inputs), len(inputs))
    if workers <= 1 or "-" in inputs:
        return _unskip_all([analyze_one(p, cfg, entries[p]) for p in inputs])
    from logdoctor.parallel import fan_out

    return _unskip_all(fan_out(_analyze_entry, list(entries.items()), worker_config(cfg, workers), workers))


def _analyze_entry(entry: tuple[str, bool], cfg: AnalysisConfig) -> Outcome:
    """``analyze_one`` on an ``(input, found in a directory)`` pair: the unit of work of a worker."""
    return analyze_one(entry[0], cfg, entry[1])


def _unskip_all(outcomes: list[Outcome]) -> list[Outcome]:
    """Files without training steps are skipped only beside real runs: when every input was
    skipped, nothing was analysed, and each is an input error (exit 2) again."""
    if outcomes and all(o.skipped for o in outcomes):
        return [dataclasses.replace(o, skipped=False, exit_code=ExitCode.BAD_INPUT) for o in outcomes]
    return outcomes
