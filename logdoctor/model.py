"""Data contracts between stages: the Run table schema, findings, verdicts and the Report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Literal

from logdoctor.errors import ParseError

if TYPE_CHECKING:  # polars is imported where tables are built, so `logdoctor --help` starts fast
    import polars as pl

    from logdoctor.samplerfacts import SamplerProfile

# --------------------------------------------------------------------------------------------
# Run table schema. One row per training step, sorted by step, steps unique.
# --------------------------------------------------------------------------------------------
STEP = "step"
LOSS = "loss"
LINE_NO = "line_no"
ACC = "acc"
LR = "lr"
GRAD_NORM = "grad_norm"
THROUGHPUT = "throughput"
EPOCH = "epoch"
#: A per-epoch batch counter and its stated total (``epoch 3 | 200/2983 batches``, a progress bar's
#: ``i/N``): read beside the epoch, the step is derived from them; counters, never metrics.
BATCHES = "batches"
BATCHES_TOTAL = "batches_total"
SEQS = "seqs"
TOKENS = "tokens"
LEN_MEAN = "len_mean"
LEN_MIN = "len_min"
LEN_MAX = "len_max"
PAD_FRAC = "pad_frac"
BATCH_FP = "batch_fp"
#: The fingerprints of the micro-batches (or ranks' shares) one logged step merged, joined by
#: ``+``: under gradient accumulation the union ``batch_fp`` recomposes even when every
#: micro-batch is static, so recurrence is judged on these.
MICRO_FP = "micro_fp"
#: Extra columns of a run reduced to per-block aggregates (see logdoctor.ingest.reduce): the block's
#: largest finite loss, and how many step records the block holds.
LOSS_MAX = "loss_max"
BLOCK_STEPS = "block_steps"

#: Columns every Run has, with their dtypes.
#: (dtypes are polars type names, resolved when a table is validated)
REQUIRED_COLUMNS: Mapping[str, str] = {
    STEP: "Int64",
    LOSS: "Float64",
    LINE_NO: "Int64",
}
#: Canonical optional columns and their dtypes (nullable). ``epoch`` is a float: HF logs
#: fractional epochs. ``batch_fp`` is the order-independent fingerprint of a batch's samples.
OPTIONAL_COLUMNS: Mapping[str, str] = {
    ACC: "Float64",
    LR: "Float64",
    GRAD_NORM: "Float64",
    THROUGHPUT: "Float64",
    EPOCH: "Float64",
    SEQS: "Float64",
    TOKENS: "Float64",
    LEN_MEAN: "Float64",
    LEN_MIN: "Float64",
    LEN_MAX: "Float64",
    PAD_FRAC: "Float64",
    BATCH_FP: "String",
    MICRO_FP: "String",
}
CANONICAL_COLUMNS: tuple[str, ...] = (*REQUIRED_COLUMNS, *OPTIONAL_COLUMNS)
#: ``RunMeta.format`` of the records a program handed over in memory (ingest/frames.py), not read
#: from a file: their ``lines_read`` counts rows.
FRAME_FORMAT, RECORDS_FORMAT = "dataframe", "records"
#: Per-batch length statistics, the evidence for the batching diagnosis.
LENGTH_COLUMNS: tuple[str, ...] = (SEQS, TOKENS, LEN_MEAN, LEN_MIN, LEN_MAX, PAD_FRAC)


class Severity(IntEnum):
    """How much a finding matters; ordered so that ``>=`` compares severities."""

    INFO = 10
    WARNING = 20
    ERROR = 30

    @property
    def label(self) -> str:
        """Lower-case name used in every output ("info", "warning", "error")."""
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        """Read a severity from its label; raises ValueError on anything else."""
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (expected info, warning or error)") from None


EvidenceValue = float | int | str | bool | None
Evidence = Mapping[str, EvidenceValue]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a detector found, with the numbers behind it.

    Attributes:
        code: stable code such as ``"LD101"`` (see ``logdoctor.codes``).
        rule: kebab-case rule name such as ``"loss-spike"``.
        severity: how much it matters.
        message: one sentence saying what was found, with the key numbers.
        hint: one sentence saying what to do about it.
        confidence: in [0, 1], how sure the detector is.
        first_step / last_step: the steps involved (inclusive), or None for run-wide findings.
        line: 1-based line number in the log where the finding starts, when known.
        evidence: the statistics behind the claim, written out unchanged in JSON.
        spans: the separate stretches (inclusive step ranges) a finding covers when it is not one
            stretch (a loss that diverged, came back, and diverged again); ``first_step`` ..
            ``last_step`` is then their hull. Empty for a finding of one stretch.
    """

    code: str
    rule: str
    severity: Severity
    message: str
    hint: str = ""
    confidence: float = 1.0
    first_step: int | None = None
    last_step: int | None = None
    line: int | None = None
    evidence: Evidence = field(default_factory=dict)
    spans: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if not (len(self.code) == 5 and self.code.startswith("LD") and self.code[2:].isdigit()):
            raise ValueError(f"invalid finding code {self.code!r}")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence {self.confidence} outside [0, 1]")

    @property
    def confidence_text(self) -> str:
        """``88%``, or ``undecided`` for a verdict without a confidence."""
        return "undecided" if self.confidence is None else f"{self.confidence:.0%}"


BatchingLabel = Literal["sorted", "static", "healthy", "not_batching", "inconclusive", "grouped"]
BATCHING_LABELS: tuple[BatchingLabel, ...] = (
    "sorted",
    "static",
    "healthy",
    "not_batching",
    "inconclusive",
    "grouped",
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The batching diagnosis: the answer to "is my data pipeline feeding batches badly?".

    Attributes:
        batching: one of BATCHING_LABELS.
        confidence: calibrated confidence in [0, 1]; None for an ``inconclusive`` verdict, which
            decided nothing (its summary says what was ruled out and what would decide).
        cause: short text naming the likely cause ("length-sorted batches", "cyclic lr", ...).
        summary: one sentence for humans.
        hint: what to do next (a fix, or what to log to decide).
        evidence: the numbers behind the verdict.
    """

    batching: BatchingLabel
    confidence: float | None
    cause: str
    summary: str
    hint: str = ""
    evidence: Evidence = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.batching not in BATCHING_LABELS:
            raise ValueError(f"invalid batching verdict {self.batching!r}")
        if self.confidence is None and self.batching != "inconclusive":
            raise ValueError(f"a {self.batching!r} verdict needs a confidence")
        if self.confidence is not None and not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence {self.confidence} outside [0, 1]")

    @property
    def confidence_text(self) -> str:
        """``88%``, or ``undecided`` for a verdict without a confidence."""
        return "undecided" if self.confidence is None else f"{self.confidence:.0%}"


@dataclass(frozen=True, slots=True)
class Restart:
    """One place where the run started again: a counter that went back, a resume line, an appended run.

    Attributes:
        step: the global step of the first row after the restart.
        kind: ``counter_reset`` | ``resume_line`` | ``appended_run`` | ``resume`` (the epoch fell
            back while the step continued: source ``epoch_fell_back``).
        source: what showed it (``step``, ``epoch``, ``marker_lines``, ...).
    """

    step: int
    kind: str
    source: str


@dataclass(frozen=True, slots=True)
class NulRun:
    """A run of NUL bytes skipped in a line log (ingest/linefilter.py).

    Attributes:
        offset: where it starts in the (decompressed) input, in bytes.
        size: how many NUL bytes in a row.
    """

    offset: int
    size: int


@dataclass(frozen=True, slots=True)
class StuckCounter:
    """A step counter that stopped advancing: many records in a row at one step (structure/stuck.py).

    Attributes:
        step: the step every one of these records carries.
        records: how many records in a row carry it.
        first_line / last_line: the file lines of the first and last of them (0 when unknown).
        whole: True when the log holds no other step (the counter never advanced).
    """

    step: int
    records: int
    first_line: int = 0
    last_line: int = 0
    whole: bool = False


@dataclass(frozen=True, slots=True)
class ConfigFact:
    """A fact the run's own configuration states (W&B config, MLflow params), with its source.

    Attributes:
        name: what it says: ``epochs``, ``batch_size``, ``grad_accum``, ``group_by_length``,
            ``lr_schedule``, ``max_steps``, ``model``, ``task``.
        value: the value as configured.
        source: where it was read, e.g. ``wandb config num_train_epochs``.
    """

    name: str
    value: str | float | bool
    source: str


@dataclass(frozen=True, slots=True)
class LogEvent:
    """A line (or a block of lines) of the log that says a failure, a stop, a recovery or the end
    of training, in the words of ingest/parsers/lexicon.py.

    Attributes:
        kind: the lexicon class: ``cuda_oom``, ``nccl_timeout``, ``dataloader_killed``, ``killed``,
            ``nan_guard``, ``no_update``, ``restore_failed``, ``time_limit``, ``job_cancelled``,
            ``terminated`` (SIGTERM), ``keyboard_interrupt``, ``exception`` (any other Python traceback); per line:
            ``oom_recovered``, ``nonfinite_skipped``, ``early_stopping``, ``training_done``.
        cause: the plain cause in words ("the GPU ran out of memory").
        line: 1-based line of the log that says it (the exception line of a traceback).
        text: that line as the log wrote it (stripped, cut to 120 characters).
        block_line: first line of the failure's block (``Traceback (most recent call last):``).
        role: the class's role (lexicon: fatal, stop, recovered, early_stop, done).
        traceback: True when the block holds a Python traceback (the exception was not caught).
        step: the step of the last training row written above it (None before the first row, or
            before structure placed it).
        relaunched: the program's start-up lines printed before the failure are printed again
            after it (ingest/parsers/relaunch.py): it was launched again.
    """

    kind: str
    cause: str
    line: int
    text: str
    block_line: int
    role: str = "fatal"
    traceback: bool = False
    step: int | None = None
    relaunched: bool = False


@dataclass(frozen=True, slots=True)
class RunStructure:
    """The run's structure as a person reads it (the JSON ``structure`` block; see structure/).

    Attributes:
        rows: training-step rows kept (duplicates dropped).
        first_step / last_step: global optimizer step of the first / last row.
        stride: logging interval in optimizer steps; stride_source: ``steps`` | ``given``.
        grad_accum: gradient accumulation steps when the log states them.
        planned: planned total optimizer steps; planned_source: where it was read.
        finished: last_step reached planned (within one stride); None when planned is unknown.
        epochs: epochs the log covers (a partial last epoch counts).
        steps_per_epoch: optimizer steps per epoch; epoch_source: where epochs were read;
            steps_per_epoch_source: where the number was read (``given``, ``stated``,
            ``cumulative_counter`` / ``global_counter``: a running total beside a per-epoch step counter,
            ``largest_step``: a lower bound, ``stated_total``: the counter's printed ``s/N``,
            ``epoch_changes``, ``planned_over_epochs``).
        restarts: each restart, in file order.
        metrics / eval_metrics: sorted names of training metric columns / eval series.
        duplicates: records written twice and dropped.
        notes: how conflicts between sources were settled.
        running_mean: columns the log printed as running means since the epoch began (Keras
            progress bars), read back as each logged interval's mean (structure/runmean.py);
            running_mean_slopes: each one's noise slope (-1 for a running mean, 0 otherwise).
        failure: the failure or stop the log prints after the run's last training row, if any.
        events: the run's other failure events (recoveries, crashes followed by more training,
            early-stopping and end-of-training lines), in file order.
        ending: how the run ended against its plan: ``finished``, ``early_stopped``,
            ``interrupted`` (Ctrl-C), ``cancelled`` (a job cancelled, no reason named: scancel),
            ``terminated`` (the system's stop: a time limit, a preemption, SIGTERM), ``crashed``,
            ``stopped`` (before its plan, with no message), ``running`` (a log still being
            followed) or ``unknown`` (no plan and no message); ending_source: what says so.
        launches: the failures that ended launches without a training row, written on this run's
            lines (before its first row, or after its last: structure/launches.py), file order.
        planned_epochs: planned epochs the log states; planned_epochs_source: where it was read.
        last_epoch: the last epoch the log reached (as it counts them), when it counts epochs.
        epoch_unfinished: the last row's position in its epoch (``[5200/8576]``) is more than a logging
            interval short of the epoch's end: the epoch ``last_epoch`` labels was not completed.
    """

    rows: int
    first_step: int | None = None
    last_step: int | None = None
    stride: int | None = None
    stride_source: str | None = None
    grad_accum: int | None = None
    planned: int | None = None
    planned_source: str | None = None
    finished: bool | None = None
    epochs: int | None = None
    steps_per_epoch: float | None = None
    epoch_source: str | None = None
    steps_per_epoch_source: str | None = None
    restarts: tuple[Restart, ...] = ()
    metrics: tuple[str, ...] = ()
    eval_metrics: tuple[str, ...] = ()
    duplicates: int = 0
    notes: tuple[str, ...] = ()
    running_mean: tuple[str, ...] = ()
    running_mean_slopes: tuple[float, ...] = ()
    failure: LogEvent | None = None
    events: tuple[LogEvent, ...] = ()
    launches: tuple[LogEvent, ...] = ()
    ending: str = "unknown"
    ending_source: str | None = None
    planned_epochs: int | None = None
    planned_epochs_source: str | None = None
    last_epoch: float | None = None
    epoch_unfinished: bool = False


@dataclass(frozen=True, slots=True)
class RunMeta:
    """What ingest learned about the log besides the table.

    Attributes:
        path: the input as the user named it ("-" for standard input).
        format: name of the parser that read it.
        lines_read: physical lines (or records) read.
        lines_skipped: lines that held no training step (config dumps, warnings, eval lines...).
        skip_reasons: counts of skipped lines by reason.
        total_steps: the planned total when the log states it (``step 254/52000``).
        steps_per_epoch: steps in one epoch, when known, inferred or given by the user.
        steps_per_epoch_given: True when the user gave it (``--steps-per-epoch``): it then wins
            over the epoch column for where epochs start.
        resumes: how many times the run restarted from an earlier step.
        resume_steps: the first step written after each restart (same length as ``resumes``).
        overwritten_steps: step records replaced by a later write of the same step.
        duplicate_steps: identical repeated step records dropped (no resume involved).
        nonmonotonic_steps: records whose step did not advance past the record before (went back,
            or repeated that step with other values) for reasons other than a resume.
        repeated_steps: of those, the records that repeated the step just before them.
        resume_overwritten: of ``overwritten_steps``, the records a resume replaced (steps it retrained).
        stuck_counters: runs of records at one step, longer than a healthy log repeats a step
            (each collapsed to its last record before duplicates and resumes are resolved).
        lines_cut: lines longer than ``max_line`` bytes, cut to it (0: none, or not a line log).
        max_line: the line limit the log was read under (0 when it was read unfiltered).
        nul_runs: runs of NUL bytes skipped (the first 64; ``nul_bytes`` counts them all).
        aliases: source key -> canonical column, for every renamed field.
        notes: human-readable remarks from ingest ("reduced to 1 row per 10 steps", ...).
        structure: epochs, restarts, stride and plan as resolved by structure/ (None before).
        config_facts: what the run's configuration states (tracking-tool inputs), with sources.
    """

    path: str
    format: str
    lines_read: int = 0
    lines_skipped: int = 0
    skip_reasons: Mapping[str, int] = field(default_factory=dict)
    total_steps: int | None = None
    steps_per_epoch: int | None = None
    steps_per_epoch_given: bool = False
    resumes: int = 0
    resume_steps: tuple[int, ...] = ()
    overwritten_steps: int = 0
    duplicate_steps: int = 0
    nonmonotonic_steps: int = 0
    repeated_steps: int = 0
    resume_overwritten: int = 0
    stuck_counters: tuple[StuckCounter, ...] = ()
    lines_cut: int = 0
    max_line: int = 0
    nul_runs: tuple[NulRun, ...] = ()
    nul_bytes: int = 0
    aliases: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: records after splitting physical lines at lone ``\r`` (progress-bar redraws); 0 if none split
    records_read: int = 0
    structure: RunStructure | None = None
    config_facts: tuple[ConfigFact, ...] = ()


@dataclass(frozen=True, slots=True)
class Run:
    """A parsed training run: the step table, evaluation table and metadata.

    Attributes:
        table: one row per step, schema per REQUIRED_COLUMNS / OPTIONAL_COLUMNS plus any extra
            numeric columns (Float64) under their own names. Sorted by step, steps unique. No row
            only for a run that died before its first logged step (its structure holds the failure:
            structure/beforefirst.py); every other Run has at least one.
        meta: ingest metadata.
        evals: evaluation records (``step`` nullable Int64, ``line_no``, metric columns).
        earlier: the fresh runs appended to the same log before this one (file order), each
            built on its own from its own lines (structure/appended.py); empty for one run.
        lossless: step records without a loss (``step``, ``line_no`` and whatever counters and
            scales they hold: Megatron's all-skipped iteration), line order; never analysed as
            steps, but counters (skipped iterations, loss scale) are read from them too.
    """

    table: pl.DataFrame
    meta: RunMeta
    evals: pl.DataFrame = field(default_factory=lambda: _empty_frame())
    earlier: tuple[Run, ...] = ()
    lossless: pl.DataFrame = field(default_factory=lambda: _empty_frame())

    @property
    def n_steps(self) -> int:
        """Number of training-step rows."""
        return self.table.height

    def has(self, column: str) -> bool:
        """True when the column exists and holds at least one non-null value."""
        return column in self.table.columns and self.table[column].null_count() < self.table.height

    @property
    def has_length_stats(self) -> bool:
        """True when the log carries any per-batch length statistic."""
        return any(self.has(c) for c in LENGTH_COLUMNS)


def _empty_frame() -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame()


def validate_run(table: pl.DataFrame) -> pl.DataFrame:
    """Enforce the Run schema and return the table with canonical dtypes and column order.

    Raises:
        ParseError: when required columns are missing, no step is present, or steps repeat.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in table.columns]
    if missing:
        raise ParseError(f"parsed table lacks required column(s): {', '.join(missing)}")
    if table.height == 0:
        raise ParseError("no training steps found")
    import polars as pl

    casts = [pl.col(c).cast(getattr(pl, t), strict=False) for c, t in REQUIRED_COLUMNS.items()]
    casts += [pl.col(c).cast(getattr(pl, t), strict=False) for c, t in OPTIONAL_COLUMNS.items() if c in table.columns]
    extras = [c for c in table.columns if c not in CANONICAL_COLUMNS]
    casts += [pl.col(c).cast(pl.Float64, strict=False) for c in extras]
    out = table.with_columns(casts)
    if out[STEP].null_count():
        raise ParseError("some training rows have no step number")
    if out[STEP].n_unique() != out.height:
        raise ParseError("steps are not unique after normalisation")
    if not out[STEP].is_sorted():
        raise ParseError("steps are not sorted after normalisation")
    ordered = [c for c in CANONICAL_COLUMNS if c in out.columns] + sorted(extras)
    return out.select(ordered)


@dataclass(frozen=True, slots=True)
class SeriesSummary:
    """The run at a glance, as reported in the JSON ``series`` block."""

    steps: int
    first_step: int | None
    last_step: int | None
    has_acc: bool
    has_length_stats: bool
    steps_per_epoch: int | None
    epochs: float | None
    resumes: int
    duplicate_steps: int
    nonfinite_loss_steps: int
    columns: tuple[str, ...] = ()
    #: the log's other objectives (loss parts beside the analysed loss: a GAN's discriminator, a
    #: model's KL term), each at a glance
    objectives: tuple[ObjectiveSummary, ...] = ()


@dataclass(frozen=True, slots=True)
class ObjectiveSummary:
    """One objective beside the analysed loss: where it started and ended (median of its first and
    last tenth of finite rows) and how many of its rows are NaN/inf."""

    name: str
    rows: int
    first: float | None
    last: float | None
    nonfinite: int


@dataclass(frozen=True, slots=True)
class Artifacts:
    """Arrays the analysis computed that renderers may draw (never recompute).

    Attributes:
        periodogram_period: periods (in steps) of the loss periodogram.
        periodogram_power: power at those periods.
        period: the detected period in steps, if any.
        changepoints: steps where the loss regime changes.
        spike_steps: steps flagged as spikes.
        epoch_boundaries: steps at which a new epoch starts.
        recurrence_by_epoch: fraction of each epoch's batch signatures seen in an earlier epoch.
    """

    periodogram_period: tuple[float, ...] = ()
    periodogram_power: tuple[float, ...] = ()
    period: float | None = None
    changepoints: tuple[int, ...] = ()
    spike_steps: tuple[int, ...] = ()
    epoch_boundaries: tuple[int, ...] = ()
    recurrence_by_epoch: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class RunPart:
    """One of several fresh runs appended to the same log, analysed on its own (diagnosis/runs.py).

    Attributes:
        index / of: its place among the log's runs (1-based, file order) and how many there are.
        first_line / last_line: the log lines it spans (training rows and its evaluations).
        first_step / last_step / rows: its own step range and training rows.
        status: ``ok``, ``warning`` or ``error``, as a report's status.
        findings: its problems (warnings and errors not explained as symptoms), worst first.
        too_short: fewer rows than any trend analysis needs and no problem found.
        current: the last run, the one the report's headline, status and exit code describe.
        ending / ending_source: how it ended (RunStructure.ending) and what says so; a launch that
            logged no training row (``rows`` 0) ended at the failure on ``last_line``.
    """

    index: int
    of: int
    first_line: int | None
    last_line: int | None
    first_step: int | None
    last_step: int | None
    rows: int
    status: str
    findings: tuple[Finding, ...] = ()
    too_short: bool = False
    current: bool = False
    ending: str = "unknown"
    ending_source: str | None = None


@dataclass(frozen=True, slots=True)
class Check:
    """One check of the analysis and whether it could run on this run: ``skipped`` says why not
    (``detectors.base`` reasons: too few rows, no eval metric...), "" when it ran."""

    name: str
    skipped: str = ""

    @property
    def ran(self) -> bool:
        return not self.skipped


@dataclass(frozen=True, slots=True)
class Report:
    """Everything a renderer needs: the run, its summary, the verdict and the findings.

    ``runs``: one entry per fresh run appended to the log (the last is this report's run), empty
    when the log holds one run. ``sampler``: what a probe of the sampler measured (``logdoctor
    probe``); None for a report on a log.
    """

    run: Run
    series: SeriesSummary
    verdict: Verdict
    findings: tuple[Finding, ...] = ()
    artifacts: Artifacts = field(default_factory=Artifacts)
    notes: tuple[str, ...] = ()
    runs: tuple[RunPart, ...] = ()
    sampler: SamplerProfile | None = None
    #: every check the analysis made of this run, in order, each ran or skipped with its reason
    #: (empty for a report no analysis made: a probe, a hand-built one)
    checks: tuple[Check, ...] = ()

    @property
    def earlier_runs(self) -> tuple[RunPart, ...]:
        """The runs appended before the current one (file order)."""
        return tuple(r for r in self.runs if not r.current)

    @property
    def meta(self) -> RunMeta:
        """Ingest metadata of the run."""
        return self.run.meta

    @property
    def problems(self) -> tuple[Finding, ...]:
        """Warnings and errors that the verdict does not explain as symptoms, worst first."""
        own = [f for f in self.findings if f.severity >= Severity.WARNING and not f.evidence.get("explained_by")]
        return tuple(sorted(own, key=lambda f: -f.severity))

    @property
    def run_status(self) -> str:
        """This run's health: ``ok``, ``warning`` or ``error`` (its worst unexplained finding)."""
        worst = max((f.severity for f in self.findings if not f.evidence.get("explained_by")), default=None)
        return "ok" if worst is None or worst < Severity.WARNING else worst.label

    @property
    def worst_earlier_run(self) -> RunPart | None:
        """The earlier run appended to this log with the worst problem (the first of equals), if any."""
        bad = [p for p in self.earlier_runs if p.findings]
        return max(bad, key=lambda p: p.findings[0].severity, default=None)

    @property
    def status(self) -> str:
        """The file's health: the worst of this run's and every earlier appended run's statuses,
        so that a log whose earlier run diverged is never ``ok``."""
        order = ("ok", "warning", "error")
        return max((self.run_status, *(p.status for p in self.earlier_runs)), key=order.index)


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of analysing one input among several: a Report, or the error that stopped it.

    Attributes:
        path: the input as expanded from the command line.
        report: the report, or None when the input could not be read or analysed.
        error: the one-line error message when ``report`` is None.
        exit_code: this input's exit code (0 ok, 1 findings at/above the threshold, 2 bad input).
        skipped: see below.
    """

    path: str
    report: Report | None
    error: str | None = None
    exit_code: int = 0
    #: a file found in a directory that holds no training steps: ``error`` says why, and the
    #: command skips it with a note instead of failing (see ``pipeline.analyze_paths``)
    skipped: bool = False


@dataclass(frozen=True, slots=True)
class RunResult:
    """One run of a fleet as its task sends it back to the driver: the run's JSON report document
    and the few values the fleet report shows, never its step table (see ``logdoctor.executors``).

    Attributes:
        path: the run's address as listed on the driver.
        document: the JSON report document (``-f json`` of this run alone), or its error document.
        exit_code: 0 ok, 1 findings at/above ``--fail-on``, 2 the run could not be read or analysed.
        status: ``ok``, ``warning``, ``error``, or ``unreadable`` when there is no report.
        steps: rows analysed (None without a report).
        worst: the rule of the worst problem, ``none``, or why the run could not be read.
        batching: the batching verdict in a word (``-`` without a report).
        rules: the rule of each problem (warnings and errors not explained as symptoms).
        spark: the loss downsampled to bucket means (NaN where a bucket has no finite loss).
        error: the one-line error when there is no report.
        skipped: a file found in a folder that holds no training steps (see ``Outcome.skipped``).
        html: the run's own self-contained HTML report, when the driver asked for it.
    """

    path: str
    document: str
    exit_code: int
    status: str
    steps: int | None = None
    worst: str = "none"
    batching: str = "-"
    rules: tuple[str, ...] = ()
    spark: tuple[float, ...] = ()
    error: str | None = None
    skipped: bool = False
    html: str | None = None
