"""What else explains a bad-looking loss: NaN, divergence, resume, instability, bad batches, lr.

NaN, spikes and instability come only from the detectors' findings as configured (LD001, LD101, LD102,
LD104), so the report and the verdict never disagree; resumes, a cyclic lr and epoch shapes are checked
here (each backed by a finding: LD003/LD004, LD506, LD202-204).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from logdoctor.detectors import lrschedule
from logdoctor.detectors.robust import Series
from logdoctor.model import Evidence, Finding, Severity
from logdoctor.stats import rolling
from logdoctor.stats.ranks import spearman
from logdoctor.stats.scale import MAD_TO_SIGMA

#: Which cause is named first when several are present: mechanisms that explain the symptoms
#: (a running average, a cyclic lr, a staircase) come before the symptoms detectors report.
PRIORITY = {
    "nan": 0,
    "resume": 1,
    "running_avg": 2,
    "cyclic_lr": 3,
    "staircase": 4,
    "instability": 5,
    "divergence": 6,
    "bad_batches": 7,
}


#: An isolated bad batch's loss is at least this many times its local level (besides its robust z).
BAD_BATCH_RATIO = 1.5


@dataclass(frozen=True, slots=True)
class Cause:
    """A non-batching explanation, strongest first when sorted by ``priority``."""

    key: str
    label: str
    priority: int
    strength: float
    evidence: Evidence = field(default_factory=dict)
    #: a finding at WARNING or above backs it (else the report shows it as information only, and
    #: the verdict must not call it "the loss problem" under an "ok" headline)
    problem: bool = True


def _mad_scale(dev: np.ndarray) -> float:
    return float(np.median(np.abs(dev - np.median(dev)))) * MAD_TO_SIGMA or 1e-12


def _peak_z(v: np.ndarray, side: int = 7, min_ratio: float = 1.0, min_rise: float = 0.0) -> np.ndarray:
    """How far each point rises above BOTH the median of the ``side`` points before it and of those
    after it, over a global MAD scale: high for a spike, low for a step or a steep smooth ramp.
    Points less than ``min_ratio`` times that local level (for a positive series), or less than
    ``min_rise`` above it, score 0.
    """
    ok = np.isfinite(v)
    z = np.zeros(v.shape)
    if ok.sum() < 4 * side:
        return z
    f = v[ok]
    left = np.r_[f[0], rolling.trailing_median(f, side)[:-1]]
    right = rolling.trailing_median(f[::-1], side)[::-1]
    right = np.r_[right[1:], f[-1]]
    level = np.maximum(left, right)
    base = f - rolling.rolling_median(f, 2 * side + 1, "shrink")
    big = ((level <= 0) | (f >= min_ratio * level)) & (f - level >= min_rise)
    z[ok] = np.where(big, (f - level) / _mad_scale(base), 0.0)
    return z


def from_findings(findings: Sequence[Finding]) -> list[Cause]:
    """Causes named by other detectors' findings."""
    table = {
        "LD001": ("nan", "non-finite loss (NaN/inf)", PRIORITY["nan"]),
        "LD002": ("divergence", "divergence", PRIORITY["divergence"]),
        "LD003": ("resume", "a resume", PRIORITY["resume"]),
        "LD004": ("resume", "a resume followed by a loss jump", PRIORITY["resume"]),
        "LD102": (
            "instability",
            "optimisation instability (grad-norm spikes)",
            PRIORITY["instability"],
        ),
    }
    out = []
    for f in sorted(findings, key=lambda f: -f.severity):  # the worst finding names a shared cause
        # a finding already explained as no fault of the model (the loss weights changed) names no cause
        if f.code in table and "explained_by" not in f.evidence:
            key, label, prio = table[f.code]
            ev: dict[str, float | int | str | bool | None] = {"from_finding": f.code}
            if key == "instability" and f.first_step is not None:  # the verdict says where they start
                ev["first_spike_step"] = f.first_step
            out.append(Cause(key, label, prio, f.confidence, ev, f.severity >= Severity.WARNING))
    return out


def resumed(resumes: int, resume_steps: Sequence[int], rewritten: int = 0) -> Cause | None:
    """The run restarted (ingest counted it); the label says how many earlier steps it rewrote."""
    if resumes <= 0:
        return None
    first = int(resume_steps[0]) if resume_steps else None
    return Cause(
        "resume",
        f"a resume that rewrote {rewritten:,} earlier step(s)" if rewritten else "a resume",
        PRIORITY["resume"],
        0.95,
        {"resumes": resumes, "first_resume_step": first},
        problem=False,  # a resume by itself is no fault; LD004 names a loss jump after one
    )


def flagged_rows(findings: Sequence[Finding], steps: np.ndarray, code: str) -> np.ndarray:
    """Row indices of the steps that ``code`` findings name (their ``step`` or first step)."""
    at = []
    for f in findings:
        if f.code == code:
            step = f.evidence.get("step", f.first_step)
            if isinstance(step, int | float):
                at.append(int(step))
    if not at or steps.size == 0:
        return np.array([], dtype=int)
    return np.unique(np.clip(np.searchsorted(steps, np.asarray(at)), 0, steps.size - 1))


def bad_batches(
    findings: Sequence[Finding],
    steps: np.ndarray,
    loss: np.ndarray,
    resid: np.ndarray,
    z_min: float,
) -> Cause | None:
    """Isolated bad batches: LD101 loss spikes (as the spike detector was configured) that stay
    spikes once the length effect is removed (robust z > ``z_min`` over the local level (the caller's:
    facts.BAD_BATCH_Z_*), at least ``BAD_BATCH_RATIO`` times it). More than max(3, 2%) such rows
    are not isolated (a periodic or length pattern). The verdict never names spikes the report
    does not show.
    """
    flagged = flagged_rows(findings, steps, "LD101")
    if flagged.size == 0:
        return None
    z = _peak_z(resid) * (_peak_z(loss, min_ratio=BAD_BATCH_RATIO) > 0)
    if np.count_nonzero(z > z_min) > max(3, 0.02 * resid.size):
        return None
    near = np.clip(flagged[:, None] + np.arange(-1, 2)[None, :], 0, z.size - 1)
    zf = z[near].max(axis=1)
    hit = flagged[zf > z_min]
    if hit.size == 0:
        return None
    ev: dict[str, float | int | str | bool | None] = {
        "loss_spikes": int(hit.size),
        "max_spike_z": round(float(zf.max()), 1),
        "first_spike_step": int(steps[hit[0]]),
        "from_finding": "LD101",
    }
    hit_steps = set(steps[hit].tolist())
    warned = any(
        f.code == "LD101" and f.severity >= Severity.WARNING and f.evidence.get("step", f.first_step) in hit_steps
        for f in findings
    )
    return Cause(
        "bad_batches",
        "isolated bad batches (loss spikes)",
        PRIORITY["bad_batches"],
        float(min(1.0, zf.max() / 20)),
        ev,
        problem=warned,
    )


def instability(findings: Sequence[Finding], steps: np.ndarray, loss: np.ndarray, resid: np.ndarray) -> Cause | None:
    """Grad-norm spikes the report shows (LD104: without an isolated loss spike) at which the loss
    still jumps: ≥ 1.2x its level over the 7 rows before, robust z > 5 (length effect removed),
    within 2 rows; instability bumps decay over several steps and so need not look like spikes."""
    at = []
    for f in findings:
        if f.code == "LD104":
            at += [v for k in ("first_step", "max_step") if isinstance(v := f.evidence.get(k), int)]
    if not at or steps.size < 30:
        return None
    rows = np.unique(np.clip(np.searchsorted(steps, np.asarray(at)), 0, steps.size - 1))
    base = resid - rolling.rolling_median(resid, 15, "shrink")
    z = base / _mad_scale(base[np.isfinite(base)])
    level = np.r_[loss[0], rolling.trailing_median(loss, 7)[:-1]]
    rise = np.where((loss >= 1.2 * level) & (z > 5), z, 0.0)
    hits = [int(r) for r in rows if rise[max(0, r - 2) : r + 3].max() > 0]
    if not hits:
        return None
    ev: dict[str, float | int | str | bool | None] = {
        "grad_norm_spikes_with_loss": len(hits),
        "first_spike_step": int(steps[hits[0]]),
        "from_finding": "LD104",
    }
    label = "optimisation instability (grad-norm spikes with loss jumps)"
    return Cause("instability", label, PRIORITY["instability"], float(min(1.0, 0.5 + 0.1 * len(hits))), ev)


def cyclic_lr(lr: np.ndarray | None, resid: np.ndarray, cyclic: bool, cycle: float | None = None) -> Cause | None:
    """A cyclic lr (``cyclic``: ``is_cyclic``, the detector's definition) that the loss follows;
    ``cycle``: its length in steps (``lr_cycle``), kept in the evidence when known."""
    if lr is None or not cyclic:
        return None
    ok = np.isfinite(lr) & np.isfinite(resid)
    v = lr[ok]
    rerise = _rerise(v)
    if np.ptp(resid[ok]) == 0:
        return None
    rho, p = spearman(resid[ok], v)
    if not (rho > 0.1 and p < 1e-4):
        return None
    return Cause(
        "cyclic_lr",
        "a cyclic / restarting learning rate that the loss follows",
        PRIORITY["cyclic_lr"],
        min(1.0, rho * 2),
        {"lr_rerise": round(rerise, 3), "loss_lr_rho": round(rho, 3), "loss_lr_p": p}
        | ({"lr_cycle_steps": round(cycle, 1)} if cycle else {}),
    )


def _rerise(v: np.ndarray) -> float:
    """How far the lr climbs again after its first peak, as a share of its range."""
    if v.size < 20 or np.ptp(v) <= 0:
        return 0.0
    warmup = v.max() - v[0] >= 0.2 * np.ptp(v)
    peak = int(np.argmax(v >= v[0] + 0.9 * (v.max() - v[0]))) if warmup else 0
    after = v[peak:]
    return float(np.max(after - np.minimum.accumulate(after)) / np.ptp(v)) if after.size else 0.0


#: The lr's rises are a cycle when their spacings deviate from its median by at most this share (MAD).
MAX_CYCLE_IRREGULARITY = 0.2


def lr_cycle(lr: Series | None) -> float | None:
    """The lr's cycle in steps: the median spacing of the rises after its warm-up peak (warm restarts
    and smooth rises, as LD604 finds them), or the distance of the one rise from the first step."""
    if lr is None:
        return None
    smooth, restarts, _ = lrschedule.cycles(lr)
    rows = sorted({a for a, _ in smooth} | {c.row for c in restarts})
    if not rows:
        return None
    starts = lr.steps[np.asarray(rows, dtype=np.int64)].astype(float)
    if starts.size == 1:
        cycle = float(starts[0] - lr.steps[0])
        return cycle if cycle > 0 else None
    gaps = np.diff(starts)
    cycle = float(np.median(gaps))
    # a cycle only where the rises come at a regular spacing (SGDR's doubling cycles have none)
    if cycle <= 0 or float(np.median(np.abs(gaps - cycle))) > MAX_CYCLE_IRREGULARITY * cycle:
        return None
    return cycle


def is_cyclic(lr: Series | None) -> bool:
    """A cyclic / restarting lr, as the lr-schedule detector defines it (LD604: the one definition)."""
    return lr is not None and lrschedule.is_cyclic(lr)
