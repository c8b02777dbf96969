"""Gather every statistic the batching verdict weighs, once, from the run and the findings."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from logdoctor.detectors import lrevents
from logdoctor.diagnosis import confounders as cf
from logdoctor.diagnosis import epochs as ep
from logdoctor.diagnosis import fixedorder as fx
from logdoctor.diagnosis import lengthrise
from logdoctor.diagnosis import lengthstats as ls
from logdoctor.diagnosis import recurrence as rc
from logdoctor.diagnosis.lrperiod import lr_period
from logdoctor.diagnosis.thresholds import DEFAULT, EPOCH_PERIOD_TOLERANCE, Thresholds
from logdoctor.model import (
    LEN_MAX,
    LEN_MEAN,
    LEN_MIN,
    LOSS,
    LR,
    MICRO_FP,
    PAD_FRAC,
    SEQS,
    TOKENS,
    Finding,
    Run,
)

#: Logged steps with a batch length needed before their order is judged.
MIN_LENGTH_STEPS = 30


@dataclass(frozen=True, slots=True)
class Facts:
    """The evidence about one run (arrays are per logged step, in step order)."""

    steps: np.ndarray
    resid: np.ndarray
    x: np.ndarray | None
    x_source: str
    spread: float
    order: ls.OrderStats | None
    loss_len: ls.LossLength | None
    epochs: ep.Epochs | None
    rec: rc.Recurrence | None
    shape: ep.EpochShape | None
    causes: tuple[cf.Cause, ...]
    has_lr: bool
    lr_cyclic: bool
    token_budget: int | None
    period: dict[str, float]
    #: per-batch columns the log does carry (even when they give no usable batch length)
    batch_columns: tuple[str, ...] = ()
    #: the largest relative spread among those columns
    batch_columns_spread: float = 0.0
    #: steps per logged row (median step gap) and whether steps are only record numbers
    stride: float = 1.0
    rows_only: bool = False
    #: the log printed the loss as a running mean since the epoch began (read back by structure/):
    #: its noise slope against the position in the epoch, else None
    running_mean_slope: float | None = None
    #: why the batch order cannot be judged although lengths are logged ("" when it can): set by the
    #: diagnosis when merged logging intervals hide HF's megabatch window (diagnosis/grouped.py)
    order_hidden: str = ""
    #: the loss at the same position in consecutive epochs (batches fed in a fixed order), if testable
    fixed_order: fx.FixedOrder | None = None
    #: with batch ids: the share of positions where consecutive epochs hold the same batch
    same_order: float | None = None
    #: first steps of the divergences (LD002) that the length-adjusted loss does not show: the
    #: batching's symptom, folded into its verdict (diagnosis/lengthrise.py)
    length_explained: frozenset[int] = frozenset()
    #: the cyclic lr's period in steps (diagnosis/lrperiod.py), when the lr cycles regularly
    lr_period: float | None = None

    @property
    def period_is_epoch(self) -> bool:
        """LD201 found a loss period (significant at its configured alpha: it reports none
        otherwise) within ``EPOCH_PERIOD_TOLERANCE`` of the epoch's length."""
        period = self.period.get("period")
        spe = self.epochs.steps_per_epoch if self.epochs else None
        return bool(period and spe and abs(period / spe - 1) <= EPOCH_PERIOD_TOLERANCE)

    @property
    def other_period(self) -> float | None:
        """LD201's loss period when it is not the epoch's (a megabatch's, a schedule's), else None."""
        period = self.period.get("period")
        return None if not period or self.period_is_epoch else period


def _running_avg(strength: float, evidence: dict[str, float]) -> cf.Cause:
    """The running-average cause, whichever way it was seen."""
    return cf.Cause(
        "running_avg", "a running-average loss that resets every epoch", cf.PRIORITY["running_avg"], strength, evidence
    )


def _running_mean_slope(run: Run) -> float | None:
    """The loss's noise slope when the structure stage read it back from a running mean."""
    st = run.meta.structure
    if st is None or LOSS not in st.running_mean:
        return None
    return st.running_mean_slopes[st.running_mean.index(LOSS)]


def _token_budget(run: Run) -> int | None:
    seqs, mx = ls.column(run, SEQS), ls.column(run, LEN_MAX)
    if seqs is None or mx is None:
        return None
    prod = seqs * mx
    prod = prod[np.isfinite(prod)]
    return int(math.ceil(prod.max() / 128) * 128) if prod.size else None


_BATCH_COLUMNS = (TOKENS, SEQS, LEN_MEAN, LEN_MIN, LEN_MAX, PAD_FRAC)

#: ingest's note for a log without step numbers (steps are record numbers, not optimizer steps)
NO_STEP_NUMBERS = "the log prints no step numbers"

#: epochs inferred from the recurrence gaps of even signature ids; only odd ids then test recurrence
SIG_INFERRED = "inferred from batch-signature recurrence"

_PERIOD_KEYS = ("p_value", "power_ratio", "acf_at_period", "epoch_ratio")


def _period(findings: Sequence[Finding]) -> dict[str, float]:
    """The LD201 periodicity finding's evidence (``period`` and its test statistics), if any: the
    detector reports a period only when its test passed at the configured ``alpha``."""
    for f in findings:
        if f.code == "LD201" and isinstance(f.evidence.get("period"), int | float):
            keys = ("period", *_PERIOD_KEYS)
            return {k: float(v) for k in keys if isinstance(v := f.evidence.get(k), int | float)}
    return {}


def _epochs(
    run: Run,
    steps: np.ndarray,
    order: ls.OrderStats | None,
    sig: tuple[np.ndarray, tuple[str, ...], str] | None,
    t: Thresholds,
) -> ep.Epochs | None:
    """Epochs as logged; else inferred from full-sort resets (order as the verdict's thresholds
    ``t`` call sorted) or from signature recurrence gaps."""
    inferred, how = None, ""
    if order is not None and t.ordered(order) and order.reset_spacing and len(order.resets) >= 2:
        inferred, how = round(order.reset_spacing), "inferred from batch-length resets"
    elif sig is not None:
        uniq = int(np.count_nonzero(np.bincount(sig[0])))  # ids are small ints: O(n), no sort
        if uniq < 0.7 * sig[0].size:
            half = sig[0] % 2 == 0  # the other half tests recurrence (sample splitting)
            inferred, how = rc.infer_period(sig[0][half], steps[half]), SIG_INFERRED
    return ep.resolve(run, steps, inferred, how)


def _recurrence(
    run: Run,
    steps: np.ndarray,
    epochs: ep.Epochs | None,
    sig: tuple[np.ndarray, tuple[str, ...], str] | None,
    min_excess: float,
) -> rc.Recurrence | None:
    """Recurrence across epochs; fingerprints that repeat within an epoch are not trusted (a
    mangled field), and the signature is used instead.
    """
    if sig is None or epochs is None or epochs.count < 2:
        return None
    if sig[2] == "fingerprint" and rc.within_epoch_repeats(sig[0], epochs.index) > 0.05:
        sig = rc.signature_ids(run, use_fingerprint=False)
        if sig is None:
            return None
    stride = (steps[-1] - steps[0] + 1) / max(steps.size, 1)
    seqs = ls.column(run, SEQS)
    ids, epoch, cols = sig[0], epochs.index, sig[1]
    skip = np.zeros(ids.size, bool) if seqs is None else seqs <= 1
    micro = rc.micro_ids(run) if sig[2] == "fingerprint" else None
    if micro is not None and rc.within_epoch_repeats(micro[0], epoch[micro[1]]) <= 0.05:
        # each logged step merged several parts: their pairing recomposes, the parts may not
        ids, epoch, skip, cols = micro[0], epoch[micro[1]], skip[micro[1]], (MICRO_FP,)
    if epochs.source == SIG_INFERRED:  # epochs found from these ids: test on the ids not used
        skip |= ids % 2 == 0
    return rc.recurrence(ids, epoch, float(stride), sig[2], cols, skip, min_excess=min_excess)


def _unique(causes: list[cf.Cause]) -> tuple[cf.Cause, ...]:
    """Causes by priority, one per key (a detector's finding and our own check may both name it)."""
    seen: dict[str, cf.Cause] = {}
    for c in sorted(causes, key=lambda c: c.priority):
        seen.setdefault(c.key, c)
    return tuple(seen.values())


#: Robust z a loss spike must keep once the length effect is removed to be an isolated bad batch:
#: with usable batch lengths (their effect removed) and from the loss alone (docs/verdict.md states
#: both; tests/unit/test_judgement.py checks the docs against these).
BAD_BATCH_Z_WITH_LENGTHS, BAD_BATCH_Z_LOSS_ONLY = 10.0, 7.0


def _bad_batch_z(lengths: bool) -> float:
    """The bad-batch z: higher when batch lengths are usable (their effect is removed first)."""
    return BAD_BATCH_Z_WITH_LENGTHS if lengths else BAD_BATCH_Z_LOSS_ONLY


def gather(run: Run, findings: Sequence[Finding], t: Thresholds = DEFAULT) -> Facts:
    """Compute the facts for ``run`` under the verdict's thresholds ``t`` (as configured): below
    ``t.min_spread`` relative IQR of batch length (e.g. packed sequences with constant tokens per
    step) its order carries no signal; ``t``'s sorted order lets epochs be inferred from length
    resets; ``t.min_excess`` is where recurrence rules static out.

    Non-finite loss is a cause only through LD001's finding: the verdict weighs the findings the
    report shows, and never decides again what a detector decided.
    """
    steps = ls.step_array(run)
    loss = run.table[LOSS].to_numpy()
    resid = ls.detrend(steps, loss)
    x, src = ls.batch_length(run)
    present = tuple(c for c in _BATCH_COLUMNS if run.has(c))
    spread = ls.relative_spread(x) if x is not None else 0.0
    # the batch-length series is one of these columns as it is (len_mean, len_max): its spread is known
    spreads = [spread if c == src else ls.relative_spread(v) for c in present if (v := ls.column(run, c)) is not None]
    usable = x is not None and spread >= t.min_spread and np.isfinite(x).sum() >= MIN_LENGTH_STEPS
    order = ls.order_stats(steps, x, ls.column(run, LEN_MAX)) if usable and x is not None else None
    sig = rc.signature_ids(run)
    epochs = _epochs(run, steps, order, sig, t)
    lr = ls.column(run, LR)
    loss_len = ls.loss_length(resid, x) if usable and x is not None else None
    tracks = ls.tracks(loss_len)
    clean = ls.remove_length(resid, x if tracks else None)
    adjusted = loss - (resid - clean)  # the loss with its batch-length effect removed
    by_length = lengthrise.length_explained(findings, steps, adjusted) if tracks else frozenset()
    if usable and x is not None:
        by_length |= lengthrise.length_matched(findings, steps, loss, x)
    found = [
        # a fresh run appended to the log left nothing before it: only restarts inside the kept
        # trajectory (a step above its first) can shape the loss
        cf.resumed(
            len(inside := [r for r in run.meta.resume_steps if steps.size and r > steps[0]]),
            inside,
            run.meta.overwritten_steps,
        ),
        cf.bad_batches(findings, steps, loss, clean, _bad_batch_z(tracks or usable)),
        cf.instability(findings, steps, loss, clean),
        cf.cyclic_lr(lr, clean, cyclic := cf.is_cyclic(lrevents.lr_series(run)) if lr is not None else False),
    ]
    # a detector's finding names the cause more precisely ("a resume followed by a loss jump")
    own = [f for f in findings if not (f.code == lengthrise.DIVERGENCE and f.first_step in by_length)]
    causes = cf.from_findings(own) + [c for c in found if c is not None]
    shape = ep.shape(steps, adjusted, clean, epochs) if epochs is not None else None
    slope = _running_mean_slope(run)
    if slope is not None:  # read back by the structure stage
        causes.append(_running_avg(min(1.0, -slope), {"noise_slope": slope}))
    elif shape is not None and shape.running_average:  # still in the loss: seen in its epoch shape
        causes.append(_running_avg(min(1.0, shape.noise_ratio / 8), {"noise_ratio": round(shape.noise_ratio, 2)}))
    elif shape is not None and shape.staircase:
        causes.append(
            cf.Cause(
                "staircase",
                "an epoch staircase (memorisation across epochs)",
                cf.PRIORITY["staircase"],
                min(1.0, abs(shape.jump_z) / 10),
                {"epoch_jump": round(shape.jump, 4)},
            )
        )
    return Facts(
        steps=steps,
        resid=resid,
        x=x if usable else None,
        x_source=src,
        spread=spread,
        order=order,
        loss_len=loss_len,
        epochs=epochs,
        rec=_recurrence(run, steps, epochs, sig, t.min_excess),
        shape=shape,
        causes=_unique(causes),
        has_lr=lr is not None,
        lr_cyclic=cyclic,
        token_budget=_token_budget(run),
        period=_period(findings),
        batch_columns=present,
        batch_columns_spread=max(spreads, default=0.0),
        stride=float(np.median(np.diff(steps))) if steps.size > 1 else 1.0,
        rows_only=_rows_only(run),
        running_mean_slope=slope,
        fixed_order=fx.fixed_order(steps, clean, epochs),
        same_order=fx.same_order_share(sig[0], epochs.index) if sig is not None and epochs is not None else None,
        length_explained=by_length,
        lr_period=lr_period(steps, lr) if lr is not None and cyclic else None,
    )


def _rows_only(run: Run) -> bool:
    """Steps are record numbers: the log prints none and the structure stage could not place the
    rows on the optimizer-step axis either (it did when its stride is more than one step)."""
    st = run.meta.structure
    placed = st is not None and st.stride is not None and st.stride > 1
    return not placed and any(NO_STEP_NUMBERS in n for n in run.meta.notes)
