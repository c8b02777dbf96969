"""Turn the batching facts into a Verdict: one sentence, cause, hint, calibrated confidence."""

from __future__ import annotations

import math

import numpy as np

from logdoctor import codes
from logdoctor.diagnosis.epochs import EpochShape
from logdoctor.diagnosis.facts import MIN_LENGTH_STEPS, Facts
from logdoctor.diagnosis.lengthstats import OrderStats, tracks
from logdoctor.diagnosis.recurrence import Recurrence
from logdoctor.diagnosis.thresholds import Thresholds
from logdoctor.model import Verdict

EvidenceDict = dict[str, float | int | str | bool | None]
LOG_WHAT = "log per-batch seqs, tokens, len_min, len_max and batch_fp each step (see logdoctor.emit)"


def confidence(margin: float) -> float:
    """Logistic map of a decision margin (in units of its scale) to [0.05, 0.995]."""
    return min(0.995, max(0.05, 1.0 / (1.0 + math.exp(-margin))))


def rounded(v: float | None, nd: int = 4) -> float | None:
    """``v`` rounded to ``nd`` places; None for a missing or non-finite value."""
    return None if v is None or not math.isfinite(v) else round(float(v), nd)


def evidence(f: Facts) -> EvidenceDict:
    """The flat evidence mapping behind every verdict."""
    ev: EvidenceDict = {
        "batch_length_source": f.x_source or None,
        "length_spread": rounded(f.spread),
    }
    if f.order is not None:
        o = f.order
        ev |= {
            "lag1_len_mean": rounded(o.lag1),
            "lag1_len_max": rounded(o.lag1_len_max),
            "lag1_z": rounded(o.z, 1),
            "monotone_frac": rounded(o.monotone_frac),
            "direction": o.direction,
            "length_resets": len(o.resets),
            "reset_spacing": rounded(o.reset_spacing, 1),
        }
    if f.loss_len is not None:
        c = f.loss_len
        ev |= {
            "loss_length_rho": rounded(c.rho),
            "loss_length_p": c.p_value,
            "loss_length_ci_low": rounded(c.ci_low),
            "loss_length_ci_high": rounded(c.ci_high),
        }
    if f.epochs is not None:
        ev |= {
            "steps_per_epoch": f.epochs.steps_per_epoch,
            "epochs": f.epochs.count,
            "epoch_source": f.epochs.source,
        }
    if f.rec is not None:
        r = f.rec
        ev |= {
            "recurrence_kind": r.kind,
            "recurrence_columns": ",".join(r.columns),
            "recurrence_fraction": rounded(r.fraction),
            "recurrence_chance": rounded(r.chance),
            "recurrence_expected_if_static": rounded(r.expected_if_static),
            "recurrence_excess": rounded(r.excess),
            "recurrence_p": r.p_value,
            "recurrence_n": r.n,
        }
        if r.pairs is not None:
            ev |= {
                "recurrence_rare_signatures": r.pairs.signatures,
                "recurrence_same_epoch_pairs": r.pairs.observed,
                "recurrence_same_epoch_pairs_null": rounded(r.pairs.expected, 2),
                "recurrence_same_epoch_pairs_if_static": rounded(r.pairs.if_static, 2),
            }
    if f.shape is not None:
        s = f.shape
        ev |= {
            "epoch_jump": rounded(s.jump),
            "epoch_jump_z": rounded(s.jump_z, 2),
            "sawtooth_ratio": rounded(s.sawtooth_ratio, 3),
            "phase_r2": rounded(s.phase_r2),
            "noise_ratio": rounded(s.noise_ratio, 2),
        }
    if f.period:
        ev |= {f"period_{k}" if k != "period" else k: v for k, v in f.period.items()}
        if f.epochs is not None and f.epochs.steps_per_epoch:
            ev["period_epoch_ratio"] = rounded(f.period["period"] / f.epochs.steps_per_epoch, 3)
    ev["same_order_share"] = rounded(f.same_order)
    ev["causes"] = ",".join(c.key for c in f.causes) or None
    ev["token_budget_estimate"] = f.token_budget
    return ev


SORTED_FIX = "Shuffle every epoch; a bucketed shuffle keeps the padding savings"
STATIC_FIX = (
    "Re-form the batches every epoch with a bucketed shuffle (shuffle within length buckets, "
    "batch, then shuffle the batches); it keeps the padding savings"
)


def _buckets_hint(f: Facts, base: str = SORTED_FIX) -> str:
    if f.token_budget:
        cmd = f"logdoctor buckets LENGTHS --token-budget {f.token_budget}"
        return f"{base}: run `{cmd}` on your dataset's lengths."
    return f"{base} (`logdoctor buckets`)."


def _tracks(f: Facts) -> str:
    c = f.loss_len
    if c is None or not tracks(c):
        return ""
    return f"; the loss follows batch length (ρ={c.rho:.2f})"


def sorted_verdict(f: Facts, o: OrderStats, t: Thresholds) -> Verdict:
    """Batches fed in length order, fully (resets at the epoch) or within windows."""
    spe = f.epochs.steps_per_epoch if f.epochs else None
    per_epoch = spe and o.reset_spacing and 0.8 <= o.reset_spacing / spe <= 1.25
    where = (
        "within each epoch"
        if per_epoch or len(o.resets) <= 1
        else f"within windows of about {o.reset_spacing:.0f} steps (the same windows every epoch, or epochs unknown)"
    )
    period = " with the epoch as its period" if per_epoch else ""
    summary = f"Batches are fed in {o.direction} length order {where}{_tracks(f)}{period}."
    return Verdict(
        "sorted", confidence(t.order_margin(o)), "length-sorted batches", summary, _buckets_hint(f), evidence(f)
    )


def static_verdict(f: Facts, r: Recurrence, t: Thresholds) -> Verdict:
    """The same batches every epoch, only their order shuffled."""
    what = "batch fingerprints" if r.kind == "fingerprint" else "batch signatures"
    summary = (
        f"The same batches recur every epoch ({r.fraction:.0%} of {what} already seen in an "
        f"earlier epoch, {r.expected_if_static:.0%} expected if static, {r.chance:.1%} by chance"
        f"{_occupancy(r)}); {_order_of_static(f)}"
        f"{_tracks(f)}."
    )
    scale = 0.05 if r.kind == "fingerprint" else 0.15
    m = (2.5 if r.kind == "fingerprint" else 1.5) + (r.excess - t.min_excess) / scale
    return Verdict(
        "static",
        confidence(m),
        "static batch composition",
        summary,
        _buckets_hint(f, STATIC_FIX),
        evidence(f),
    )


#: Share of positions holding the same batch as in the previous epoch above which the order is
#: called identical: a per-epoch shuffle of n batches matches about 1/n of them (0 on any real run).
SAME_ORDER = 0.9


def _order_of_static(f: Facts) -> str:
    """``in the same order every epoch`` when the ids repeat position by position, else ``only
    their order is shuffled``."""
    if f.same_order is not None and f.same_order >= SAME_ORDER:
        return f"and in the same order every epoch ({f.same_order:.0%} of positions hold the previous epoch's batch)"
    return "only their order is shuffled"


def _occupancy(r: Recurrence) -> str:
    if r.pairs is None:
        return ""
    p = r.pairs
    return (
        f"; copies of rare signatures share an epoch {p.observed:.0f} times where a recomposing "
        f"pipeline gives {p.expected:.0f}"  # its p-value is evidence (-v, JSON)
    )


def _order_text(f: Facts, t: Thresholds) -> str:
    if f.order is None and f.x_source and f.steps.size < MIN_LENGTH_STEPS:
        return (
            f"judged from the loss: batch statistics ({f.x_source}) are logged on only "
            f"{f.steps.size} steps, too few to check it"
        )
    if f.order is None and f.batch_columns:
        cols = " and ".join(f.batch_columns)
        return f"the logged per-batch {cols} give no usable batch length to rule batching out entirely"
    if f.order is None:
        return "the log has no per-batch statistics to rule batching out entirely"
    if f.order_hidden:
        return f"batch order cannot be judged: {f.order_hidden}"
    if f.order.lag1 < t.min_lag1:
        return f"batch order is random (lag-1 length correlation {f.order.lag1:.2f})"
    # a steady drift with no reset and no loss tracking: a curriculum or a slow trend, not sorting
    return (
        f"batch length drifts steadily (lag-1 length correlation {f.order.lag1:.2f}) but never resets "
        "and the loss does not follow it, which is not length-sorted feeding"
    )


def not_batching_verdict(f: Facts, t: Thresholds) -> Verdict:
    """Something is wrong, and the evidence points away from batching."""
    c = f.causes[0]
    others = [x.label for x in f.causes[1:]]
    extra = f" (also: {'; '.join(others)})" if others else ""
    if c.key in _INFO_CAUSES or not c.problem:  # a pattern, not a fault: information, not "the loss problem"
        summary = f"The loss shows {c.label}{extra}, which is not a batching fault: {_order_text(f, t)}."
    else:
        summary = f"The loss problem comes from {c.label}{extra}, not from batching: {_order_text(f, t)}."
    ev = evidence(f) | {f"cause_{k}": v for k, v in c.evidence.items()}
    ev["cause_is_problem"] = c.key not in _INFO_CAUSES and c.problem  # the headline and this line agree
    order_margin = (t.min_lag1 - f.order.lag1) / 0.1 if f.order is not None else 2.0
    m = 1.0 + 2.0 * c.strength + float(np.clip(order_margin, -1.0, 2.0))
    hint = codes.RULES[_CAUSE_CODE.get(c.key, "LD101")].action
    return Verdict("not_batching", confidence(m), c.label, summary, hint, ev)


#: Causes that describe a healthy pattern (information), not a fault.
_INFO_CAUSES = frozenset({"staircase", "running_avg"})

_CAUSE_CODE = {
    "nan": "LD001",
    "divergence": "LD002",
    "resume": "LD004",
    "instability": "LD102",
    "bad_batches": "LD101",
    "cyclic_lr": "LD201",
    "running_avg": "LD204",
    "staircase": "LD203",
}


def loss_only_sorted_verdict(f: Facts, s: EpochShape) -> Verdict:
    """An epoch sawtooth in the loss, with no batch statistics and an lr that does not cycle."""
    summary = (
        f"The loss follows a sawtooth with the epoch as its period (jump {s.jump:+.3f} at each "
        f"boundary, drifting back within the epoch) that the lr does not "
        f"explain: batches are most likely fed in length order; {LOG_WHAT} to confirm."
    )
    m = (1.5 if f.period_is_epoch else 0.5) + min(  # LD201 agrees: the loss repeats with the epoch
        (s.sawtooth_ratio - 0.5) / 0.25, (abs(s.jump_z) - 5) / 5, (s.phase_r2 - 0.1) / 0.1
    )
    return Verdict(
        "sorted",
        confidence(m),
        "epoch sawtooth (length-sorted order likely)",
        summary,
        _buckets_hint(f),
        evidence(f),
    )


def no_rows_verdict() -> Verdict:
    """A run that died before its first logged step: no batch was trained, nothing to judge."""
    return Verdict(
        "inconclusive",
        None,
        "no training step",
        "The run stopped before its first logged step: no batch was trained, so batching cannot be judged.",
        "Fix the failure the log names and run again; a log with training steps can be judged.",
    )


def undecidable_verdict(f: Facts, extra: str = "") -> Verdict:
    """Loss only (or lengths that never vary), no epoch pattern: composition cannot be judged."""
    why = (
        "the lr is not logged, so an epoch-periodic schedule cannot be ruled out, and "
        if (f.shape is not None and f.shape.sawtooth)
        else ""
    )
    what = "The log has no per-batch statistics"
    cause = "no batch statistics"
    if f.batch_columns and not f.x_source:
        what = _partial_stats_text(f)
        cause = "no batch length in the logged statistics"
    if f.x_source:
        what = (
            f"The logged batch lengths ({f.x_source}) barely vary (relative spread {f.spread:.1%}: "
            "packed sequences or interval averages), so their order carries no signal,"
        )
        cause = "batch lengths do not vary"
    summary = (
        f"{what} and {why}the loss alone cannot tell static composition from a healthy shuffle{extra}; {LOG_WHAT}."
    )
    return Verdict("inconclusive", None, cause, summary, f"To decide, {LOG_WHAT}.", evidence(f))


def _partial_stats_text(f: Facts) -> str:
    """Which per-batch statistics the log has, and why they cannot decide."""
    cols = " and ".join(f.batch_columns)
    why = (
        f"they barely vary (relative spread {f.batch_columns_spread:.1%}: constant under packing, "
        "or averaged over a logging interval)"
        if f.batch_columns_spread < 0.05
        else "they give no per-batch length (that needs len_mean, or tokens together with seqs)"
    )
    return f"The log has per-batch {cols}, but {why}, so batch order and composition cannot be read from them,"


#: What would decide recomposition, as a static-undecidable verdict says it (a probe says its own).
LOG_FP_ADVICE = "log batch_fp every step (and the epoch)"
LOG_FP_HINT = "Log batch_fp (a fingerprint of the sample indices) and the epoch for every step."


def static_undecidable_verdict(f: Facts, t: Thresholds) -> Verdict:
    """Order is random, but recomposition across epochs cannot be checked."""
    reason = (
        "no epoch information"
        if f.epochs is None
        else "only one epoch"
        if f.rec is None
        else "too few logged batches to compare across epochs"
        if not f.rec.decidable
        else f"batch recurrence {f.rec.excess:.0%} of the way to static, no more than chance gives"
    )
    head = (
        f"The batch order cannot be judged ({f.order_hidden})"
        if f.order_hidden
        else f"Batches are not fed in length order ({_order_text(f, t)})"
    )
    summary = (
        f"{head}, {'and' if f.order_hidden else 'but'} with {reason} the log "
        "cannot tell "
        f"whether they are recomposed every epoch; {LOG_FP_ADVICE}."
    )
    return Verdict(
        "inconclusive",
        None,  # it decided nothing: the summary says what was checked and what would decide
        "composition across epochs unknown",
        summary,
        LOG_FP_HINT,
        evidence(f),
    )


def healthy_verdict(f: Facts, r: Recurrence, t: Thresholds) -> Verdict:
    """Random order, recomposed every epoch, nothing else wrong."""
    o = f.order
    order = f"; {_order_text(f, t)}" if o is not None else ""
    summary = (
        f"Batches are recomposed every epoch ({r.fraction:.1%} recur vs {r.chance:.1%} by chance)"
        f"{order}; "
        f"nothing in the loss points at the data pipeline{_tracks(f)}."
    )
    m = 1.0 + min(3.0, (t.min_excess - r.excess) / 0.15, (t.min_lag1 - o.lag1) / 0.1 if o is not None else 3.0)
    return Verdict("healthy", confidence(m), "recomposed, shuffled batches", summary, "", evidence(f))
