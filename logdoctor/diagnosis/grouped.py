"""The `grouped` verdict: length-grouped megabatches, from batch statistics or from the loss alone."""

from __future__ import annotations

import math

import numpy as np

from logdoctor.diagnosis import megabatch as mb
from logdoctor.diagnosis import windows as win
from logdoctor.diagnosis.facts import Facts
from logdoctor.diagnosis.lengthstats import OrderStats, column
from logdoctor.diagnosis.recurrence import Recurrence
from logdoctor.diagnosis.thresholds import Thresholds
from logdoctor.diagnosis.verdicts import EvidenceDict, _tracks, confidence, evidence, rounded
from logdoctor.model import SEQS, Run, Verdict

COST = (
    "a deliberate speed feature, at a cost: the loss oscillates at the megabatch period and every "
    "megabatch is a short length curriculum"
)
HINT = (
    "Keep it if the speed matters more than the oscillation (judge the loss averaged over a "
    "megabatch); otherwise use a bucketed shuffle with random batch order (`logdoctor buckets`)."
)


#: Length resets at most this share of the epoch apart are windows inside it (a sort per window).
MAX_WINDOW_EPOCHS = 0.8


def windowed(f: Facts, o: OrderStats, static: bool, t: Thresholds) -> bool:
    """Sorted runs inside windows, recomposed each epoch (else `sorted`: a full or fixed order).

    With the epoch from the log: resets spaced at most ``MAX_WINDOW_EPOCHS`` epoch; or, on a small dataset whose
    windows are about an epoch long, windows that do not recur (a full sort gives the same batches
    every epoch) and resets that are not all at epoch boundaries. With the epoch inferred from the
    resets themselves, the windows must not recur. A fixed order (static windows) stays `sorted`.
    """
    if len(o.resets) < 2 or not o.reset_spacing or static or f.epochs is None:
        return False
    spe = f.epochs.steps_per_epoch
    recomposed = t.recomposed(f.rec)
    if not spe or f.epochs.source.startswith("inferred from batch-length resets"):
        return recomposed
    if o.reset_spacing <= MAX_WINDOW_EPOCHS * spe:
        return True
    starts = np.asarray(f.epochs.starts, dtype=float)
    off = [min(abs(starts - r)) > 0.1 * spe for r in o.resets]
    return recomposed and any(off)


def reset_inside_first_epoch(f: Facts, o: OrderStats) -> int | None:
    """A length reset well inside an epoch, in a log that has not finished two epochs: a whole-epoch
    sort never resets there, and whether its windows are recomposed each epoch cannot be seen yet.
    The step of the first such reset, else None (epochs unknown or inferred from the resets, a
    second epoch to compare, or every reset at an epoch boundary)."""
    if f.epochs is None or f.epochs.count >= 2 or not o.resets:
        return None
    spe = f.epochs.steps_per_epoch
    if not spe or f.epochs.source.startswith("inferred from batch-length resets"):
        return None
    starts = np.asarray(f.epochs.starts, dtype=float)
    inside = [r for r in o.resets if min(abs(starts - r)) > 0.1 * spe]
    return int(inside[0]) if inside else None


def windows_undecided(f: Facts, o: OrderStats, at: int) -> Verdict:
    """Length order within windows, seen in the first epoch only: grouped or fixed windows."""
    spe = f.epochs.steps_per_epoch if f.epochs else None
    summary = (
        f"Batches are fed in {o.direction} length order within windows{_tracks(f)}: the length resets "
        f"at step {at:,}, inside the first {spe:,}-step epoch, which a whole-epoch sort does not do; "
        "whether the windows are recomposed every epoch (length-grouped megabatches, as HF "
        "group_by_length) or the same every epoch (a fixed sorted order) shows from the second epoch on."
    )
    ev = evidence(f) | {"reset_inside_epoch": at}
    return Verdict(
        "inconclusive",
        None,
        "length-ordered windows, one epoch seen",
        summary,
        "Analyse again after the second epoch (and log batch_fp every step).",
        ev,
    )


def from_stats(f: Facts, o: OrderStats, t: Thresholds, hf_steps: int | None = None) -> Verdict:
    """Sorted windows, recomposed every epoch (``hf_steps``: HF's megabatch for this run's sizes)."""
    sampler = mb.window_sampler(o.reset_spacing or 0.0, hf_steps)
    summary = (
        f"Batches are length-grouped megabatches: {o.direction} length order within windows of "
        f"about {o.reset_spacing:.0f} steps, recomposed every epoch, as in {sampler}{_tracks(f)}; "
        f"{COST}."
    )
    ev = evidence(f) | {"megabatch_period": rounded(o.reset_spacing, 1), "megabatch_sampler": sampler}
    return Verdict("grouped", confidence(t.order_margin(o)), "length-grouped megabatches", summary, HINT, ev)


def loss_match(f: Facts) -> mb.Match | None:
    """An LD201 loss period at the megabatch length, not the epoch's; else the candidate
    megabatch periods tested directly (LD201 searches every period and may stop at the harmonics
    of a sawtooth)."""
    period = f.other_period
    spe = f.epochs.steps_per_epoch if f.epochs else None
    if period is not None:
        found = mb.match_rows(period, spe) if f.rows_only else mb.match_steps(period, f.stride, spe)
        if found is not None:
            return found
    return mb.match_folded(f.steps, f.resid, f.stride, spe, f.rows_only)


def explains(f: Facts) -> bool:
    """A megabatch period at an exact, known length is the pipeline's signature and outranks loss
    spikes, grad-norm spikes (its longest batch comes first), a "divergence", an epoch staircase and
    a resume (a resume is never the cause of a period: it explains the jump after it), which stay
    listed under ``causes``; not NaN, a cyclic lr or a running average, which reshape the loss over
    time themselves."""
    return not {c.key for c in f.causes} & {"nan", "cyclic_lr", "running_avg"}


def from_loss(f: Facts, match: mb.Match) -> Verdict:
    """No batch statistics; the loss repeats at the megabatch period and the lr does not cycle."""
    unit = "logged rows" if f.rows_only else "steps"
    how = (
        f"{match.period:.1f} {unit} = {match.megabatch_steps} optimizer steps if logged every {match.stride} steps"
        if f.rows_only
        else f"{match.period:.0f} steps"
        + (
            f" (the {match.megabatch_steps}-step megabatch aliased by logging every {match.stride} steps)"
            if match.aliased
            else ""
        )
    )
    # plain words here; the tests' p-values are evidence (megabatch_p, period_p_value: -v, JSON)
    test = "LD201" if match.source == "LD201" else f"its phase explains {match.r2:.0%} of the detrended loss"
    summary = (
        f"The loss repeats every {how} ({test}), which the lr "
        f"does not explain and which matches {match.sampler}: batches are most likely "
        f"length-grouped megabatches; {COST}."
    )
    ev = evidence(f) | {
        "megabatch_period": rounded(match.period, 3),
        "megabatch_steps": match.megabatch_steps,
        "megabatch_stride_assumed" if f.rows_only else "megabatch_stride": match.stride,
        "megabatch_aliased": match.aliased,
        "megabatch_sampler": match.sampler,
        "megabatch_test": match.source,
        "megabatch_p": match.p_value,
        "megabatch_r2": rounded(match.r2) if match.r2 is not None else None,
    }
    return Verdict(
        "grouped", loss_confidence(f, match), "length-grouped megabatches (from the loss)", summary, HINT, ev
    )


def loss_confidence(f: Facts, match: mb.Match) -> float:
    """The confidence a megabatch period in the loss gives by itself."""
    strength = f.period.get("power_ratio", 0.0) if match.source == "LD201" else (match.r2 or 0.0)
    return confidence((0.5 if f.rows_only else 1.0) + min(2.0, strength / 0.1))


def averaged_reason(f: Facts) -> str:
    """Why the loss cannot show a megabatch period (logging averages it away), or what an
    unmatched loss period could be."""
    spe = f.epochs.steps_per_epoch if f.epochs else None
    period = f.other_period
    if period is not None:
        unit = "logged rows" if f.rows_only else "steps"
        return (
            f"; the loss repeats every {period:.1f} {unit} (LD201), which matches no known megabatch "
            f"size (HF: {mb.HF_MEGABATCH} optimizer steps), so length-grouped batching cannot be "
            "told from another periodic cause"
        )
    if f.rows_only or not mb.averaged_away(f.stride, spe):
        return ""
    return (
        f"; logging the mean loss every {f.stride:.0f} steps averages a {mb.HF_MEGABATCH}-step "
        "length-grouped megabatch period away, so group_by_length cannot be seen in the loss"
    )


def stats_windows(run: Run, f: Facts, t: Thresholds) -> win.Search:
    """HF's megabatch window for this run's sizes, and the observed reset spacing, tested on the
    batch statistics (nothing found without usable batch lengths); a window's changes go one way
    at least as often as the sorted rule asks (``t.min_monotone``)."""
    if f.x is None or f.order is None:
        return win.Search(None, None, False, 1)
    return win.find(f.steps, f.x, column(run, SEQS), f.epochs, f.order.reset_spacing, t.min_monotone)


def hidden(search: win.Search) -> str:
    """Why the batch order cannot be judged from statistics merged over logging intervals ("" when
    it can): the rows never fall inside one of HF's windows for this run's sizes."""
    if search.found is not None or search.hf_steps is None or search.hf_tested or search.stride <= 1:
        return ""
    return (
        f"statistics merged over {search.stride}-step logging intervals cannot show the order inside "
        f"a {search.hf_steps}-step window, HF group_by_length's megabatch for this run's sizes; log "
        "every step to check it"
    )


def _window_evidence(w: win.Windows, match: mb.Match | None) -> EvidenceDict:
    ev: EvidenceDict = {
        "megabatch_period": w.steps,
        "megabatch_hf_mult": w.hf_mult,
        "megabatch_samples": w.samples,
        "megabatch_batch": w.batch,
        "window_changes": w.within,
        "window_changes_along": w.along,
        "window_p": w.p_within,
        "window_boundaries": w.bounds,
        "window_boundaries_back": w.back,
    }
    if match is not None:
        ev |= {
            "megabatch_loss_period": rounded(match.period, 3),
            "megabatch_loss_test": match.source,
            "megabatch_loss_p": match.p_value,
        }
    return ev


def from_windows(f: Facts, w: win.Windows, match: mb.Match | None) -> Verdict:
    """Sorted windows of HF's size for this run (or of the reset spacing), whatever the lag-1
    correlation over the whole run; the loss period, when it matches, is added as evidence."""
    sampler = (
        f"HF LengthGroupedSampler / group_by_length: mega_batch_mult = min({w.samples} samples // "
        f"(4 × {w.batch} per step), {mb.HF_MEGABATCH}) = {w.steps}"
        if w.is_hf
        else mb.window_sampler(float(w.steps))
    )
    recomposed = ", recomposed every epoch" if f.rec is not None and f.rec.decidable else ""
    loss = (
        f"; the loss repeats at the same period ({match.period:.1f} steps)"
        if match is not None and match.megabatch_steps == w.steps
        else ""
    )
    summary = (
        f"Batches are length-grouped megabatches: {w.direction} length order within windows of "
        f"{w.steps} steps ({w.along} of {w.within} changes inside a window go that way; "
        f"{w.back} of {w.bounds} window starts jump back){recomposed}, as in "
        f"{sampler}{_tracks(f)}{loss}; {COST}."
    )
    ev = evidence(f) | {"megabatch_sampler": sampler} | _window_evidence(w, match)
    m = 1.5 + min(3.0, math.log10(win.ALPHA / max(w.p_within, 1e-300)) / 2) + (1.0 if loss else 0.0)
    return Verdict("grouped", confidence(m), "length-grouped megabatches", summary, HINT, ev)


def hidden_verdict(f: Facts, r: Recurrence) -> Verdict:
    """Recomposed every epoch, but the logging interval hides the order inside HF's window for
    this run's sizes: group_by_length can neither be seen nor ruled out (never `healthy`)."""
    summary = (
        f"Batches are recomposed every epoch ({r.fraction:.1%} recur vs {r.chance:.1%} by chance), but "
        f"their order cannot be judged: {f.order_hidden}."
    )
    return Verdict(
        "inconclusive",
        confidence(2.0),
        "batch order hidden by the logging interval",
        summary,
        "Log the batch statistics every step (HF: logging_steps=1).",
        evidence(f),
    )
