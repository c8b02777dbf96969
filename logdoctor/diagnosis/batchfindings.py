"""Findings the batching diagnosis adds (LD501-506, epoch shapes LD202-204) and its artifacts."""

from __future__ import annotations

import dataclasses

from logdoctor import codes
from logdoctor.diagnosis import attribution
from logdoctor.diagnosis.epochs import EpochShape
from logdoctor.diagnosis.facts import Facts
from logdoctor.diagnosis.lengthstats import tracks
from logdoctor.diagnosis.thresholds import EPOCH_PERIOD_TOLERANCE
from logdoctor.diagnosis.verdicts import confidence, rounded
from logdoctor.model import Finding, Severity, Verdict

_VERDICT_CODE = {"sorted": "LD501", "static": "LD502", "inconclusive": "LD504", "grouped": "LD505"}


def _shape_finding(f: Facts, s: EpochShape, span: dict[str, int]) -> Finding | None:
    """LD204 running-average reset, else LD203 staircase, else LD202 sawtooth (at most one)."""
    ev = {
        "epoch_jump": rounded(s.jump),
        "epoch_jump_z": rounded(s.jump_z, 2),
        "sawtooth_ratio": rounded(s.sawtooth_ratio, 3),
        "phase_r2": rounded(s.phase_r2),
        "noise_ratio": rounded(s.noise_ratio, 2),
        "boundaries": s.boundaries,
        "steps_per_epoch": f.epochs.steps_per_epoch if f.epochs else None,
    }
    if s.running_average:
        code, margin = "LD204", s.noise_ratio - 3
        msg = (
            f"The logged loss is a running average reset each epoch: its step-to-step noise is "
            f"{s.noise_ratio:.1f}x larger early in the epoch than late."
        )
    elif s.staircase or s.sawtooth:
        code, margin = ("LD203" if s.staircase else "LD202"), abs(s.jump_z) - 4
        how = "without drifting back" if s.staircase else "and drifts back"
        msg = f"The loss jumps by {s.jump:+.3f} at each epoch boundary {how} within the epoch."
    else:
        return None
    return codes.finding(code, msg, evidence=ev, confidence=confidence(margin), **span)


def findings_for(v: Verdict, f: Facts) -> tuple[Finding, ...]:
    """The findings the diagnosis itself adds, each with its evidence."""
    span = {"first_step": int(f.steps[0]), "last_step": int(f.steps[-1])} if f.steps.size else {}
    out: list[Finding] = []
    code = _VERDICT_CODE.get(v.batching)
    if code:
        out.append(
            codes.finding(
                code,
                v.summary,
                hint=v.hint,
                # an inconclusive verdict has no confidence; that the log cannot decide is certain
                confidence=1.0 if v.confidence is None else v.confidence,
                evidence=dict(v.evidence),
                **span,
            )
        )
    c = f.loss_len
    if c is not None and tracks(c):
        msg = (
            f"The detrended loss tracks batch length (Spearman ρ={c.rho:.2f}, 95% CI {c.ci_low:.2f}..{c.ci_high:.2f})."
        )
        ev = {"loss_length_rho": rounded(c.rho), "loss_length_p": c.p_value, "n": c.n}
        out.append(codes.finding("LD503", msg, confidence=confidence(abs(c.rho) * 10), evidence=ev, **span))
    cyc = next((x for x in f.causes if x.key == "cyclic_lr"), None)
    if cyc is not None:
        msg = (
            f"The lr rises again by {cyc.evidence.get('lr_rerise', 0):.0%} of its range after its first "
            f"peak and the detrended loss follows it (Spearman ρ={cyc.evidence.get('loss_lr_rho')})."
        )
        out.append(codes.finding("LD506", msg, confidence=cyc.strength, evidence=dict(cyc.evidence), **span))
    shape = _shape_finding(f, f.shape, span) if f.shape is not None else None
    if shape is None and f.running_mean_slope is not None:
        shape = _read_back(f.running_mean_slope, span)
    if shape is not None and shape.code == "LD202" and v.batching in ("sorted", "grouped"):
        # the sawtooth is the verdict's own symptom (its LD501/LD505 says so): one finding, not two
        shape = explained(shape, f"{v.batching}-batching")
    elif shape is not None and shape.code == "LD202" and v.batching != "static" and _lr_restarts_each_epoch(f):
        # the lr restarts at every epoch boundary and the loss follows it (LD506): the jump is the schedule's
        shape = explained(shape, "cyclic-lr")
    if shape is not None:
        out.append(shape)
    return tuple(out)


def _lr_restarts_each_epoch(f: Facts) -> bool:
    """The lr the loss follows (LD506) cycles with the epoch: its cycle is the epoch length, within
    the tolerance that epochs jitter by."""
    cycle = attribution.lr_cycle_of(f)
    spe = f.epochs.steps_per_epoch if f.epochs is not None else None
    return cycle is not None and spe is not None and spe > 0 and abs(cycle / spe - 1) <= EPOCH_PERIOD_TOLERANCE


def explained(f: Finding, by: str) -> Finding:
    """``f`` lowered to info, marked as a symptom of the verdict's cause ``by``."""
    return dataclasses.replace(f, severity=Severity.INFO, evidence={**f.evidence, "explained_by": by})


def _read_back(slope: float, span: dict[str, int]) -> Finding:
    """LD204 for a running-mean loss the structure stage read back as per-interval means."""
    msg = (
        "The logged loss is a running average reset each epoch (its step-to-step change shrinks as "
        f"1/k through the epoch: slope {slope:.2f}); the analyses read each logged interval's own "
        "mean, undone from it."
    )
    ev = {"noise_slope": slope, "read_back": True}
    return codes.finding("LD204", msg, evidence=ev, confidence=confidence(-slope * 10 - 3), **span)


def artifacts_for(f: Facts) -> dict[str, object]:
    """Epoch boundaries and per-epoch recurrence, for renderers to draw."""
    out: dict[str, object] = {}
    if f.epochs is not None:
        out["epoch_boundaries"] = f.epochs.starts
    if f.rec is not None:
        out["recurrence_by_epoch"] = f.rec.by_epoch
    return out
