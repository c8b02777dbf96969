"""Steps per epoch and the planned total, from the epoch column and what the log states."""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.ingest.sidecars import CONFIG_SOURCES, SOURCES
from logdoctor.model import EPOCH, STEP
from logdoctor.structure.barsteps import bar_steps


def infer_steps_per_epoch(table: pl.DataFrame) -> int | None:
    """Steps per epoch from the epoch column: steps per epoch between the first and last change
    of an integer epoch,
    or 1 / slope of a fractional epoch (HF) against the step. None when it cannot be told."""
    if EPOCH not in table.columns:
        return None
    ep = table.select(STEP, pl.col(EPOCH)).drop_nulls().drop_nans()
    if ep.height < 2 or ep[EPOCH].n_unique() < 2:
        return None
    if (ep[EPOCH] == ep[EPOCH].round()).all():
        starts = ep.filter(pl.col(EPOCH).diff() > 0)
        if starts.height < 2:
            return None
        gap = ep[STEP].diff().median()
        if float(gap or 0) <= 1:  # type: ignore[arg-type]  # every step logged: the typical epoch
            med = starts[STEP].diff().drop_nulls().median()
            return round(float(med)) if med else None  # type: ignore[arg-type]
        # steps over epochs between the first and last epoch change: rows logged every k steps
        # can cross several epochs at once (Sockeye checkpoints), so a median gap would be k
        d_step = float(starts[STEP][-1] - starts[STEP][0])
        d_epoch = float(starts[EPOCH][-1] - starts[EPOCH][0])
        return max(1, round(d_step / d_epoch)) if d_epoch > 0 and d_step > 0 else None
    slope = float(np.polyfit(ep[STEP].to_numpy().astype(float), ep[EPOCH].to_numpy(), 1)[0])
    return max(1, round(1.0 / slope)) if slope > 0 else None


def _first_step(result: ParseResult) -> int | None:
    """The smallest step of the raw rows, when any."""
    if STEP not in result.table.columns or result.table.height == 0:
        return None
    first = result.table[STEP].min()
    return int(first) if first is not None else None  # type: ignore[arg-type]


def _first_epoch(result: ParseResult) -> float | None:
    """The smallest epoch of the raw rows, when they carry one."""
    if EPOCH not in result.table.columns or result.table.height == 0:
        return None
    first = result.table[EPOCH].cast(pl.Float64, strict=False).drop_nulls().drop_nans().min()
    return float(first) if first is not None else None  # type: ignore[arg-type]


def _epoch_counter_total(
    planned: int | None, source: str | None, epoch_source: str | None, epochs: int | None, notes: list[str]
) -> tuple[int | None, str | None]:
    """The run's planned steps when the step counter counts within each epoch (``Epoch 1 | Step
    10/6501``, placed ``two_level``): the counter's total is one epoch's length, so the run's plan is
    that total times the planned epochs, and unknown without them (it was reported as the whole run's:
    "6,501 planned, reached 13,001")."""
    if epoch_source != "two_level" or source != "column" or not planned:
        return planned, source
    if epochs:
        notes.append(
            f"planned {planned * epochs} steps = {epochs} epochs x the step counter's per-epoch total {planned}"
        )
        return planned * epochs, "header"
    notes.append(
        f"the step counter's total {planned} counts one epoch's steps; the log states no planned epochs: "
        "the run's planned length is unknown"
    )
    return None, None


def plan(
    result: ParseResult, spe: int | None, epoch_source: str | None, spe_source: str | None, notes: list[str]
) -> tuple[int | None, str | None, int | None, str | None, str | None]:
    """(planned, its source, steps per epoch, epoch source, steps-per-epoch source) from what the
    log states: the parser's total, a config dump's ``max_update``, batches per epoch x planned
    epochs (``Epoch N/M``)."""
    m = result.markers
    planned, source = result.total_steps, result.planned_source
    if planned and not source:
        source = "column"
    if planned is None and m.config_planned:
        planned, source = m.config_planned, "config"
    if planned is None and result.step_from_order and (bar := bar_steps(result.table, m.bars)) is not None:
        planned, source = bar.total, "progress_bar"  # the bar that moves with the rows counts the steps
    if spe is None and m.epoch_batches:
        spe, spe_source = m.epoch_batches, "stated"
        notes.append(f"steps per epoch {spe}: the batches per epoch the log states")
    elif spe is None and planned and m.epochs_planned and planned >= m.epochs_planned:
        spe, epoch_source, spe_source = round(planned / m.epochs_planned), "inferred", "planned_over_epochs"
        notes.append(f"steps per epoch {spe} = {planned} planned steps / {m.epochs_planned} epochs")
    if planned is None and spe and m.epochs_planned:
        first = _first_step(result)
        if first is not None and first >= spe * m.epochs_planned:
            # the step counts from an earlier run (Coqui GLOBAL_STEP 1000001 under EPOCH 0/1000): the
            # epochs planned here say nothing about the step the run ends at
            notes.append(
                f"{m.epochs_planned} epochs x {spe} steps planned, but the log's first step is {first}: "
                "the step counts from an earlier run, the planned last step is unknown"
            )
            return planned, source, spe, epoch_source, spe_source
        start = _first_epoch(result)
        if result.step_from_order and start is not None and start > 1:
            # rows numbered from 1 by record order in a log that starts at a later epoch (a resumed run):
            # its row numbers do not count the earlier epochs, so no planned step compares with them
            notes.append(
                f"{m.epochs_planned} epochs planned, but the log's rows start at epoch {start:g} and are "
                "numbered by record order: the planned last step is unknown (the ending is judged by epochs)"
            )
            return planned, source, spe, epoch_source, spe_source
        # a file beside the log that states the epochs (ingest/sidecars.py: ``args.yaml``) is named
        planned, source = spe * m.epochs_planned, _stated_by(m.epochs_planned_source)
        notes.append(f"planned {planned} steps = {m.epochs_planned} epochs x {spe} steps")
    planned, source = _epoch_counter_total(planned, source, epoch_source, m.epochs_planned, notes)
    return planned, source, spe, epoch_source, spe_source


def _stated_by(source: str | None) -> str:
    """Where planned steps made of planned epochs were read: the epoch headers and config dumps of the
    log itself are its ``header``; a file beside it is named."""
    return source if source in SOURCES else "header"


def passed_budget(planned: int | None, source: str | None, table: pl.DataFrame, notes: list[str]) -> int | None:
    """``planned`` unless it came from a config dump (the log's, or one beside it: ingest/sidecars.py)
    and the run's own rows pass it by more than one logging interval: a training loop stops at its step
    budget, so such a value budgets something else (keithito Tacotron's ``max_iters``, the decoder's
    step limit at inference), or another launch than the one the rows are of, not the run."""
    if (
        not planned
        or (source != "config" and source not in CONFIG_SOURCES)
        or STEP not in table.columns
        or table.height < 2
    ):
        return planned
    step = np.unique(table[STEP].drop_nulls().to_numpy())
    gaps = np.diff(step)
    every = float(np.median(gaps)) if gaps.size else 1.0
    if step[-1] <= planned + every:
        return planned
    notes.append(f"the config dump's {planned} is not the run's planned steps: its rows go on to step {int(step[-1])}")
    return None
