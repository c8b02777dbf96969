"""A total loss that rises while none of its parts does: the loss weights changed, not the model.

A trainer that logs its total beside the parts it is made of (icefall/k2's ``loss`` beside
``simple_loss`` and ``pruned_loss``, a VAE's total beside its reconstruction and KL terms, a detector's
total beside its box/cls terms) may change the total's definition during the run: a loss-weight
schedule (icefall's pruned-loss warm-up scale 0 -> 0.1 -> 1.0), KL annealing, an auxiliary or
feature-matching term switched on or ramped. The total then steps or climbs up while every part keeps
falling. With fixed positive weights that cannot happen: ``sum w_i p_i`` rises by a ratio no larger
than the largest ratio of its parts, so a total that rises while every part falls or holds had its
weights changed (or gained a term). Such a rise is no divergence (LD002) nor a regime change of the
model (LD301): the level change is said as info (``loss_weights`` in its evidence), a divergence or
rise over it is explained by the loss weights (``explained_by``), and divergence is judged on the
parts instead. A real divergence raises at least one part with the total, and then nothing is
explained.

Parts: only of a total (never when the loss analysed is the main one of several objectives, such as
a GAN's generator beside its discriminator: one rising while the others fall is no weight change); the
loss parts logged in the same rows as the total (:func:`nonfinite.other_objectives`,
finite in ``MIN_SHARED`` of the total's rows), at least ``MIN_PARTS`` of them. A part "does not
rise" when the median of its rows after the rise is at most ``NOISE_K`` times its step-to-step noise
(MAD of first differences / sqrt 2, on log scale for a positive part) above the median before.

Null (bench/weights_null.py): the healthy logs of bench/short_jump_null.py whose runs log at least two
parts with the total: 151 parts of 10 runs in 8 logs (detectron2 Mask2Former, mmdet Faster R-CNN,
PaddleDetection RT-DETR, Ultralytics YOLO11, icefall, DeepSpeed-Chat RLHF, a Lightning PINN). The
change of a part's 10-row median between two adjacent windows, at every row, in units of its noise:
median -0.27, 90th percentile 0.72, 95th 1.36; 3.7% of windows are above 2 (the tail is real moves,
not noise: a Mask2Former ``loss_ce`` climbing early, by up to 41 units). Pure noise moves the
difference of two 10-row medians by 1.25 * sqrt(2/10) = 0.56 units (sd); ``NOISE_K`` = 2 is 3.6 of
those. At the icefall warm-up jumps (a healthy dev run) every part moves by at most 0.9 units while
the total rises by 4.3 and 9.4; where a dev RTMDet run diverges, its parts rise by 266 to 1,122. No healthy
or diverging log of tests/answers.tsv other than that run changes answer with the rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from logdoctor.detectors import robust
from logdoctor.detectors.nonfinite import other_objectives
from logdoctor.ingest.parsers.objective import MAIN_PART_NOTE
from logdoctor.model import LOSS, STEP, Finding, Run, Severity

#: Fewest parts: one part rising with the total would be the total itself.
MIN_PARTS = 2
#: A part is logged with the total when it is finite in this share of the total's finite rows.
MIN_SHARED = 0.95
#: A part does not rise when its level rises by at most this many times its step-to-step noise.
NOISE_K = 2.0
#: The findings of a total's rise that a change of the loss weights explains (divergence, level change, sustained rise).
EXPLAINED = frozenset({"LD002", "LD301", "LD403"})
#: What ``explained_by`` says.
CAUSE = "loss-weights"


@dataclass(frozen=True, slots=True)
class PartChange:
    """One column's level before and after a rise (medians of the log's values), in its noise units."""

    column: str
    before: float
    after: float
    noise_units: float


@dataclass(frozen=True, slots=True)
class Parts:
    """The total and its parts over the rows where all of them are finite (table order)."""

    steps: np.ndarray
    total: np.ndarray
    parts: dict[str, np.ndarray]


def own_parts(run: Run) -> Parts | None:
    """The total and its own parts (logged in the same rows), None with fewer than ``MIN_PARTS``."""
    t = run.table
    if LOSS not in t.columns or STEP not in t.columns:
        return None
    if any(n.startswith(MAIN_PART_NOTE) for n in run.meta.notes):
        return None  # the loss is one objective among others (a GAN's generator), not their total

    def floats(c: str) -> np.ndarray:
        return t[c].cast(float, strict=False).fill_null(np.nan).to_numpy().astype(float)

    total = floats(LOSS)
    has = np.isfinite(total)
    if not has.any():
        return None
    parts = {}
    for c in other_objectives(run):
        v = floats(c)
        if np.isfinite(v[has]).mean() >= MIN_SHARED:
            parts[c] = v
    if len(parts) < MIN_PARTS:
        return None
    ok = has.copy()
    for v in parts.values():
        ok &= np.isfinite(v)
    steps = t[STEP].cast(float, strict=False).fill_null(np.nan).to_numpy().astype(float)
    ok &= np.isfinite(steps)
    return Parts(steps[ok], total[ok], {c: v[ok] for c, v in parts.items()})


def _change(name: str, v: np.ndarray, before: np.ndarray, after: np.ndarray) -> PartChange | None:
    y = np.log(v) if np.all(v > 0) else v
    sigma = float(robust.diff_noise(y))
    if not 0 < sigma < np.inf or not before.any() or not after.any():
        return None
    d = float(np.median(y[after]) - np.median(y[before]))
    return PartChange(name, float(np.median(v[before])), float(np.median(v[after])), d / sigma)


def weights_change(
    parts: Parts, before: tuple[float, float], after: tuple[float, float]
) -> tuple[PartChange, list[PartChange]] | None:
    """(the total's change, each part's) when the total rose more than ``NOISE_K`` noise units between
    the rows of steps ``before`` and those of steps ``after`` (inclusive ranges) while no part rose more
    than ``NOISE_K``; else None."""
    s = parts.steps
    b = (s >= before[0]) & (s <= before[1])
    a = (s >= after[0]) & (s <= after[1])
    total = _change(LOSS, parts.total, b, a)
    if total is None or total.noise_units <= NOISE_K:
        return None
    changes = []
    for c, v in parts.parts.items():
        ch = _change(c, v, b, a)
        if ch is None or ch.noise_units > NOISE_K:
            return None
        changes.append(ch)
    return total, changes


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _row(steps: np.ndarray, step: int | None) -> int | None:
    at = np.flatnonzero(steps == step) if step is not None else np.zeros(0, dtype=int)
    return int(at[0]) if at.size else None


Window = tuple[float, float]


def _windows(run: Run, f: Finding) -> tuple[Window, Window] | None:
    """The step ranges a finding compares: a level change's two sides; for a divergence or a sustained
    rise, the smoothing window around its best level and as many rows from where it starts."""
    s = robust.series(run, LOSS)
    ev = f.evidence
    st = s.steps
    if f.code == "LD301":
        r, e = _row(st, _int(ev.get("step"))), _row(st, _int(ev.get("step_end")))
        nb, na, rel = _int(ev.get("rows_before")), _int(ev.get("rows_after")), ev.get("relative_change")
        if r is None or e is None or nb is None or na is None or not isinstance(rel, float | int) or rel <= 0:
            return None
        if r < nb or e + na > s.n or nb < 1 or na < 1:
            return None
        return (float(st[r - nb]), float(st[r - 1])), (float(st[e]), float(st[e + na - 1]))
    b, a, w = _row(st, _int(ev.get("best_step"))), _row(st, f.first_step), _int(ev.get("smoothing_rows"))
    if b is None or a is None or w is None:
        return None
    h = w // 2
    # the best level's window, and the rows from where the rise is first sustained: whatever comes
    # after (a part that diverges later) is judged on the parts themselves
    return (float(st[max(0, b - h)]), float(st[min(s.n - 1, b + h)])), (
        float(st[a]),
        float(st[min(s.n - 1, a + 2 * h)]),
    )


def _explain(f: Finding, total: PartChange, changes: list[PartChange]) -> Finding:
    said = ", ".join(f"{c.column} {c.before:.4g} -> {c.after:.4g}" for c in changes)
    fell = all(c.after <= c.before for c in changes)
    why = (
        f"The total loss rose at step {f.first_step} ({total.before:.4g} -> {total.after:.4g}) while every part "
        f"{'fell' if fell else f'fell or held within {NOISE_K:g}x its step-to-step noise'} ({said}): a change "
        "of the loss weights (a schedule or a term switched on), not of the model."
    )
    # the level change says it (info, shown); a divergence or rise over the same jump is its symptom
    # (explained, listed with -v), and names no cause to the batching verdict
    ev = {
        **f.evidence,
        ("loss_weights" if f.code == "LD301" else "explained_by"): CAUSE,
        "weights_total_noise_units": round(total.noise_units, 2),
        "weights_parts": len(changes),
        "weights_max_part_noise_units": round(max(c.noise_units for c in changes), 2),
        "weights_noise_k": NOISE_K,
    }
    return dataclasses.replace(f, severity=Severity.INFO, message=f"{why} {f.message}", evidence=ev)


def by_weights(f: Finding) -> bool:
    """True for a finding this module said is a change of the loss weights."""
    return CAUSE in (f.evidence.get("explained_by"), f.evidence.get("loss_weights"))


def _part_divergences(run: Run, parts: Parts) -> list[Finding]:
    """LD002 on each part, as the total's definition changed (judged by the divergence detector)."""
    from logdoctor.detectors.divergence import DivergenceDetector

    out = []
    for c in parts.parts:
        for f in DivergenceDetector().find(robust.series(run, c)):
            msg = f.message.replace("The loss diverged", f"The loss part `{c}` diverged", 1)
            out.append(
                dataclasses.replace(
                    f,
                    message=f"{msg.rstrip('.')} (judged on the parts: the total's loss weights changed).",
                    evidence={**f.evidence, "part": c},
                )
            )
    return out


def attach(run: Run, findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` with each rise of the total that no part shares explained as a change of the
    loss weights (info), and divergence judged on the parts where a divergence was so explained."""
    todo = any(f.code in EXPLAINED and "explained_by" not in f.evidence for f in findings)
    parts = own_parts(run) if todo else None
    if parts is None:
        return list(findings)
    out: list[Finding] = []
    explained_divergence = False
    for f in findings:
        w = _windows(run, f) if f.code in EXPLAINED and "explained_by" not in f.evidence else None
        got = weights_change(parts, *w) if w is not None else None
        if got is not None:
            explained_divergence |= f.code == "LD002"
            f = _explain(f, *got)
        out.append(f)
    if explained_divergence:
        out += _part_divergences(run, parts)
    return out
