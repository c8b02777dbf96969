"""Structure marker lines of a text log: epoch banners, progress bars, resume lines, run headers."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logdoctor.ingest.parsers.lines import LINE, LINE_NO
from logdoctor.ingest.parsers.screen import Lines

#: Cheap prefilter (Aho-Corasick, any case): only lines holding one of these are looked at closely.
_PREFILTER = (
    "epoch", "checkpoint", "resum", "restor", "running training", "train on ", "training started", "training run",
    "accumulation", "optimization steps", "update-interval", "update_interval", "max_update",
    "max_steps", "max_iter", "num_train_steps", "total generation batches", "continuing training",
    "will skip the first",
    "fast-forwarding the dataloader", "patience", "early-stopping", "%|",
)  # fmt: skip
_PREFIX = r"^(?:.{0,120}?\b(?:INFO|WARNING|WARN|DEBUG)\b\]?\s*[-:|]?\s*)?"
#: Terminal colour codes around a header (Coqui's ``\x1b[4m\x1b[1m > EPOCH: 3/1000\x1b[0m``, rich, loguru).
_ANSI = r"(?:\x1b\[[0-9;]*m)*"
#: A line that starts an epoch: ``Epoch 3/10`` (Keras), ``##### Epoch 3 #####``, ``-----> epoch 4``,
#: ``Beginning of Epoch 1/1, Total ...``. Nothing but punctuation around it (or a comma after).
EPOCH_START = (
    _PREFIX + _ANSI + r"[\s#=*>\-]*(?i:beginning of |start(?:ing)? (?:of )?)?(?i:epoch)\s*[:#]?\s*(\d+)"
    r"\s*(?:/\s*(\d+))?[\s#=*<\-]*" + _ANSI + r"(?:$|,\s)"
)
#: A line that ends an epoch: ``epoch 2 finished: 144 steps``, ``end of epoch 3``.
EPOCH_END = (
    r"(?i)\bepoch\s*(\d+)\s*(?:/\s*(\d+))?\s*(?:is\s+)?(?:finished|done|completed?|ended)\b"
    r"|(?i)\bend of epoch\s*(\d+)\b"
)
#: An epoch's start counted before the word, ESPnet2's ``2/3epoch started. Estimated time to finish: ...``
#: (espnet2/train/trainer.py ``run``: ``f"{iepoch}/{max_epoch}epoch started"``): the epoch and the plan.
EPOCH_COUNT_START = r"(?:^|[\s:])(\d+)/(\d+)\s?epochs? started\b"
#: A tqdm bar of one epoch: ``Epoch 3:  34%|███▍      | 50/146 [...]``.
EPOCH_BAR = r"(?i)\bepoch\s*(\d+)\s*:\s*\d{1,3}%\|"
#: A tqdm bar's count and total: ``66%|████▌     | 15450/23260 [4:41:07<2:22:44, ...]`` (tqdm/std.py
#: ``format_meter``: ``'{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]'``).
BAR_COUNT = r"\d{1,3}%\|[^|]*\|\s*(\d+)/(\d+)\s*\["
#: An explicit resume: a checkpoint of this run loaded (not pretrained weight shards).
RESUME_LINE = (
    r"(?i)\b(?:loading|loaded|restor(?:ing|ed)|resum(?:ing|ed)|continu(?:ing|e))\b[^\n]{0,40}?"
    r"\b(?:from\s+)?checkpoint\b"
    # HF Trainer 4.x ``Continuing training from epoch 1`` / ``from global step 400`` / ``Will skip the
    # first 1 epochs then the first 0 batches``; 5.x ``Fast-forwarding the dataloader past 1 epochs``
    r"|\bcontinuing training from (?:epoch|global step)\s*\d|\bwill skip the first \d+ epochs?\b"
    r"|\bfast-forwarding the dataloader past \d+ epochs?\b"
)
#: The global step a resume line names (HF ``Continuing training from global step 400``, 5.x
#: ``Resuming training from checkpoint with epoch 1 and global step 400``).
_RESUME_STEP = (
    r"(?i)\b(?:continuing training from|resuming training from checkpoint with epoch \d+ and) global step (\d+)"
)
#: Checkpoint lines that are no resume: pretrained weight shards, saving.
NOT_RESUME = r"(?i)checkpoint shards|checkpoints? (?:saved|to)\b|saving|unable|not found|could not|no checkpoint"
#: A new run's header: HF ``***** Running training *****``, Keras ``Train on 58 samples``, keithito
#: Tacotron's ``Starting new training run`` (util/infolog.py ``init``: ``Starting new %s training run``).
RUN_HEADER = r"(?i)\*+\s*running training\s*\*+|^\s*train on \d+ samples|^\s*starting new (?:\S+ )?training run\s*$"
#: Lines other than epoch markers worth a closer look (resume, run header, plan).
_OTHER = (
    r"(?i)checkpoint|resum|restor|running training|train on \d|training started|training run|accumulation"
    r"|continuing training|will skip the first|fast-forwarding"
    r"|update.interval|optimization steps|num epochs|epochs['\"]?\s*[=:]|epoch_num\s*[=:]|max_update|max_steps|max_iter"
    r"|num_train_steps|total generation batches"
    r"|patience|early-stopping"
)
_METRIC = r"(?i)loss|\bacc|ppl|perplexity"
_ACCUM = r"(?i)(?:gradient[ _]accumulation[ _]steps|--update[-_]interval)\s*[=:]?\s*(\d+)"
_PLANNED = r"(?i)total optimization steps\s*[=:]\s*([\d,]+)"
_SAMPLES = r"(?i)^\s*train on (\d+) samples"
#: Planned epochs: HF ``Num Epochs = 3`` / ``num_train_epochs: 3``, argparse ``Namespace(epochs=20)``,
#: YAML ``epochs: 300``, OpenMMLab ``max_epochs=12`` (mmcv runner / mmengine train_cfg) and mmdet 1.x-2.x
#: ``total_epochs = 12``, Lightning ``max_epochs: 100``, timm ``Scheduled epochs: 300``. Never a part of
#: the schedule (``warmup_epochs``, Marian's ``after-epochs: 0``: a word or ``-`` before ``epochs``),
#: zero (no limit), nor a count that goes on (``epochs: 2.5``, ``epochs=3/10``); HF's ``3.0`` is 3.
_NUM_EPOCHS = (
    r"(?i)(?:^|[^\w-])(?:num(?:ber of)?[ _]|num_train_|max_|total_|scheduled )?epochs['\"]?\s*[=:]\s*"
    r"([1-9]\d*)(?:\.0+)?(?:[^\d./]|\.(?:\D|$)|$)"
)
#: PaddleOCR's name for the planned epochs, in its config dump (ppocr/utils/utility.py ``print_dict``:
#: ``'{}{} : {}'.format(indent, k, v)`` of ``Global: epoch_num: 500``; tools/program.py ``train()``:
#: ``epoch_num = config['Global']['epoch_num']``, the last epoch it runs). Only a dump line whose value
#: ends it: a loop's ``epoch_num: 3, loss: ...`` is its current epoch, no plan.
_EPOCH_NUM = r"(?i)(?:^|[^\w-])epoch_num\s*[=:]\s*([1-9]\d*)\s*$"
#: Epoch counts that are no plan. Megatron's dataset index mapping prints how many passes over a
#: dataset its sample budget needs (megatron/data/gpt_dataset.py ``total number of epochs: {}``).
#: DeepSpeed's config print shows its data-efficiency curriculum's ``'num_epochs': 1000`` (the
#: data_sampling default in deepspeed/runtime/data_pipeline/constants.py), no plan of the run either.
_NOT_EPOCH_PLAN = r"(?i)total number of epochs|data_efficiency_config|data_sampling"
#: Planned updates in a config dump (fairseq ``'max_update': 100000``, ``max_steps=...``).
#: detectron2's yacs dump spells it ``MAX_ITER: 90000`` (upper case only: an optimizer's or a solver's
#: ``max_iter`` is no step budget of the run). JAX programs name it ``num_train_steps`` (the Flax
#: examples' configs, clu ``ReportProgress(num_train_steps=...)``), logged by clu's LoggingWriter
#: ``write_hparams`` as ``[Hyperparameters] {'num_train_steps': 1000, ...}`` (real runs:
#: fixtures/writers/clu/).
_CONFIG_PLAN = r"(?:(?i:\b(?:max_(?:update|steps|iters)|num_train_steps)['\"]?\s*[=:])|\bMAX_ITER:)\s*([1-9][\d,]*)"
#: The patience of early stopping in a config dump or on a command line (``early_stopping_patience=3``,
#: ``'patience': 10``, ``--patience 5``; Marian's ``--early-stopping 10`` and its dump's ``[config]
#: early-stopping: 10``, marian src/common/config_parser.cpp: "Stop if the first validation metric does not
#: improve for arg consecutive validation steps"): the evaluations without improvement it waits before
#: stopping (never an lr scheduler's ``lr_patience``).
_PATIENCE = (
    r"(?i)(?:(?:\bearly_?stop(?:ping)?_|(?:^|[^\w-])(?:--)?)patience['\"]?\s*[=:]?\s*"
    r"|(?:^|[^\w-])(?:--)?early-stopping:?\s+)([1-9]\d*)\b"
)
#: Batches per epoch stated by a banner (DeepSpeed-Chat ``Total Generation Batches 477``).
_EPOCH_BATCHES = r"(?i)total (?:generation )?batches\s*[=:]?\s*(\d+)"


@dataclass(frozen=True, slots=True)
class Markers:
    """What a text log's marker lines say about its structure (line numbers are 1-based).

    Attributes:
        epoch_lines / epoch_values: line and epoch number of each epoch marker, in file order.
        epoch_ends: True when the markers close an epoch (``epoch 2 finished``), else open one.
        epoch_source: ``marker_lines`` or ``progress_bar``; None when there are no markers.
        epochs_planned: ``M`` of ``Epoch N/M`` headers, or HF's ``Num Epochs = M``.
        resume_lines: lines that load a checkpoint of the run.
        run_headers: lines that start a new run (``***** Running training *****``).
        grad_accum: gradient accumulation steps when stated.
        planned_steps: ``Total optimization steps = N`` when stated.
        samples: ``Train on N samples`` (Keras 1/TF1): the progress counter counts samples.
        config_planned: planned updates in a config dump (``max_update``), source ``config``.
        epoch_batches: batches per epoch stated by an epoch banner.
        resume_steps: (line, global step) of each resume line that names the step it resumes at.
        epochs_planned_source: ``header`` (``Epoch N/M``) or ``config`` (``Num Epochs = M``, ``epochs=M``).
        patience: the early-stopping patience a config dump states.
        plans: (field, line, value) of every statement of a plan (``planned_steps``,
            ``config_planned``, ``epochs_planned`` from a config), file order: each launch appended
            to a log states its own, and the fields above hold the last (structure/appended.py
            gives an earlier launch the plan written before its rows).
    """

    epoch_lines: tuple[int, ...] = ()
    epoch_values: tuple[int, ...] = ()
    epoch_ends: bool = False
    epoch_source: str | None = None
    epochs_planned: int | None = None
    resume_lines: tuple[int, ...] = ()
    run_headers: tuple[int, ...] = ()
    grad_accum: int | None = None
    planned_steps: int | None = None
    samples: int | None = None
    config_planned: int | None = None
    epoch_batches: int | None = None
    resume_steps: tuple[tuple[int, int], ...] = ()
    epochs_planned_source: str | None = None
    patience: int | None = None
    plans: tuple[tuple[str, int, int], ...] = ()
    #: (line, count, total) of every tqdm bar drawing, file order.
    bars: tuple[tuple[int, int, int], ...] = ()


def _ints(frame: pl.DataFrame, col: str) -> tuple[int, ...]:
    return tuple(int(v) for v in frame[col].to_list())


def _epochs(hits: pl.DataFrame, text: Lines) -> tuple[pl.DataFrame, bool, str | None]:
    """(line_no, epoch, of) of the most common kind of epoch marker, its end flag and source (``text``:
    the lines of ``hits``, screened).

    Each kind first keeps the lines a cheap test admits (a banner is short and has no ``=``; a
    closing line says finished/done/end; a bar has ``%|``), so that a log whose every step line
    carries ``epoch=`` costs one pass, not three regex extractions per line.
    """
    line = pl.col(LINE)
    kinds = (
        (EPOCH_START, False, "marker_lines", (line.str.len_bytes() <= 160) & ~line.str.contains("=", literal=True)),
        (EPOCH_END, True, "marker_lines", line.str.contains(r"(?i)finish|done|complete|ended|end of")),
        (EPOCH_BAR, False, "progress_bar", line.str.contains("%|", literal=True)),
        (EPOCH_COUNT_START, False, "marker_lines", line.str.contains("epoch started", literal=True)),
    )
    best: tuple[pl.DataFrame, bool, str | None] = (pl.DataFrame(), False, None)
    for pattern, ends, source, admit in kinds:
        if not text.may_match(pattern):
            continue
        admitted = hits.filter(admit)
        if admitted.height == 0:  # the extraction's regexes are compiled even for no rows
            continue
        got = admitted.select(
            LINE_NO,
            pl.coalesce(line.str.extract(pattern, 1), line.str.extract(pattern, 3)).alias("e"),
            line.str.extract(pattern, 2).alias("of"),
            line.str.contains(_METRIC).alias("metric"),
        ).filter(pl.col("e").is_not_null())
        if not ends and source == "marker_lines":  # a metric line is a row, not a banner
            got = got.filter(~pl.col("metric"))
        if got.height > best[0].height:
            best = (got.with_columns(pl.col("e", "of").cast(pl.Int64, strict=False)), ends, source)
    return best


def _last_int(hits: pl.DataFrame, pattern: str, text: Lines | None = None) -> int | None:
    """The value of the last line matching ``pattern`` (an appended run's header wins); ``text``:
    the lines of ``hits``, to skip a pattern that cannot match."""
    if text is not None and not text.may_match(pattern):
        return None
    vals = hits[LINE].str.extract(pattern, 1).drop_nulls().str.replace_all(",", "")
    return int(vals[-1]) if vals.len() else None


def _statements(hits: pl.DataFrame, field: str, pattern: str, text: Lines) -> list[tuple[str, int, int]]:
    """(field, line, value) of every line of ``hits`` matching ``pattern``, file order."""
    if not text.may_match(pattern):
        return []
    got = hits.select(LINE_NO, pl.col(LINE).str.extract(pattern, 1).str.replace_all(",", "").alias("v"))
    return [(field, int(a), int(b)) for a, b in got.drop_nulls().iter_rows()]


def scan_markers(frame: pl.DataFrame) -> Markers:
    """Find the structure marker lines of a text log (``frame``: line_no, line)."""
    if frame.height == 0:
        return Markers()
    hits = frame.filter(pl.col(LINE).str.contains_any(list(_PREFILTER), ascii_case_insensitive=True))
    if hits.height == 0:
        return Markers()
    screen = Lines.of(hits[LINE])
    epochs, ends, source = _epochs(hits, screen)
    _resume = pl.col(LINE).str.contains(RESUME_LINE) & ~pl.col(LINE).str.contains(NOT_RESUME)
    # most logs name none of these (``epoch=`` alone is no ``epochs=``): then no query runs
    others = hits.filter(pl.col(LINE).str.contains(_OTHER)) if screen.may_match(_OTHER) else hits.clear()
    text = Lines.of(others[LINE])
    if source == "progress_bar":  # a bar is redrawn many times: its first draw starts the epoch
        epochs = epochs.filter(pl.col("e") != pl.col("e").shift(1).fill_null(-1))
    of = epochs["of"].drop_nulls() if epochs.height else pl.Series([], dtype=pl.Int64)
    epoch_plans = others.filter(~pl.col(LINE).str.contains(_NOT_EPOCH_PLAN))
    stated = _last_int(epoch_plans, _NUM_EPOCHS, text) or _last_int(epoch_plans, _EPOCH_NUM, text)
    epoch_said = [s for p in (_NUM_EPOCHS, _EPOCH_NUM) for s in _statements(epoch_plans, "epochs_planned", p, text)]
    plans = [
        *_statements(others, "planned_steps", _PLANNED, text),
        *_statements(others, "config_planned", _CONFIG_PLAN, text),
        *(epoch_said if not of.len() else []),
    ]
    return Markers(
        epoch_lines=_ints(epochs, LINE_NO) if epochs.height else (),
        epoch_values=_ints(epochs, "e") if epochs.height else (),
        epoch_ends=ends,
        epoch_source=source,
        epochs_planned=int(of.max()) if of.len() else stated,  # type: ignore[arg-type]
        epochs_planned_source="header" if of.len() else ("config" if stated else None),
        patience=_last_int(others, _PATIENCE, text),
        resume_lines=_ints(others.filter(_resume), LINE_NO) if text.may_match(RESUME_LINE) else (),
        run_headers=_ints(others.filter(pl.col(LINE).str.contains(RUN_HEADER)), LINE_NO)
        if text.may_match(RUN_HEADER)
        else (),
        grad_accum=_last_int(others, _ACCUM, text),
        planned_steps=_last_int(others, _PLANNED, text),
        samples=_last_int(others, _SAMPLES, text),
        config_planned=_last_int(others, _CONFIG_PLAN, text),
        epoch_batches=_last_int(others, _EPOCH_BATCHES, text),
        resume_steps=_resume_steps(others) if text.may_match(_RESUME_STEP) else (),
        plans=tuple(sorted(plans, key=lambda x: x[1])),
        bars=_bars(hits) if screen.may_match(BAR_COUNT) else (),
    )


def _bars(hits: pl.DataFrame) -> tuple[tuple[int, int, int], ...]:
    """(line, count, total) of the tqdm bar drawings among ``hits``."""
    line = pl.col(LINE)
    got = hits.filter(line.str.contains("%|", literal=True)).select(
        LINE_NO,
        line.str.extract(BAR_COUNT, 1).cast(pl.Int64, strict=False).alias("n"),
        line.str.extract(BAR_COUNT, 2).cast(pl.Int64, strict=False).alias("of"),
    )
    return tuple((int(a), int(b), int(c)) for a, b, c in got.drop_nulls().iter_rows())


def _resume_steps(others: pl.DataFrame) -> tuple[tuple[int, int], ...]:
    """(line, global step) of the resume lines that name their step."""
    got = others.select(LINE_NO, pl.col(LINE).str.extract(_RESUME_STEP, 1).cast(pl.Int64).alias("g"))
    got = got.drop_nulls()
    return tuple((int(a), int(b)) for a, b in got.iter_rows())
