"""What the loss alone can and cannot rule out about batching, and the verdict for spikes without batch statistics."""

from __future__ import annotations

from logdoctor.diagnosis import megabatch as mb
from logdoctor.diagnosis.facts import Facts
from logdoctor.diagnosis.fixedorder import MIN_Z
from logdoctor.diagnosis.verdicts import LOG_WHAT, STATIC_FIX, EvidenceDict, _buckets_hint, confidence, evidence
from logdoctor.model import Verdict

#: Causes the loss alone cannot tell from batching: a spike may be a bad batch, or a long batch
#: under a loss summed over tokens (length-sorted or static batches built once put the long ones together).
SPIKE_CAUSES = frozenset({"bad_batches", "instability"})


def cannot_clear(f: Facts) -> bool:
    """No usable batch length, and every cause is a spike that batch length may explain, or a
    resume beside a loss period (a resume explains the jump after it, never a period)."""
    keys = {c.key for c in f.causes}
    if f.order is not None or not keys:
        return False
    return keys <= SPIKE_CAUSES or (keys <= SPIKE_CAUSES | {"resume"} and f.other_period is not None)


def ruled_out(f: Facts, megabatch_tested: bool) -> tuple[str, ...]:
    """What the loss itself rules out, each with the check that did it (nothing when it could not check).

    ``megabatch_tested``: the loss was tested for a length-grouped megabatch period (logging does
    not average it away) and showed none.
    """
    out: list[str] = []
    s, e = f.shape, f.epochs
    if s is not None and e is not None and e.count >= 2 and not s.sawtooth:
        out.append(f"a length sort renewed every epoch (no epoch sawtooth over {e.count} epochs)")
    if megabatch_tested and not mb.averaged_away(f.stride, e.steps_per_epoch if e else None):
        out.append(f"length-grouped megabatches (no loss period at the megabatch size, {mb.HF_MEGABATCH} steps)")
    fo = f.fixed_order
    if fo is not None and not fo.fixed:
        out.append(
            f"batches fed in the same order every epoch (the detrended loss at the same position in "
            f"consecutive epochs correlates r={fo.r:.2f}, no more than at shifted positions)"
        )
    return tuple(out)


def ruled_out_text(items: tuple[str, ...]) -> str:
    """``; the loss rules out A and B`` or ``; the loss alone rules out no batching fault``."""
    if not items:
        return "; the loss alone rules out no batching fault (too few epochs or rows to check)"
    return "; the loss rules out " + "; ".join(items)


def spikes_verdict(f: Facts, megabatch_tested: bool) -> Verdict:
    """Loss spikes (or grad-norm spikes with loss jumps) and no batch length to compare them with."""
    spikes = [c for c in f.causes if c.key in SPIKE_CAUSES]
    if spikes:
        c = spikes[0]
        n = c.evidence.get("loss_spikes", c.evidence.get("grad_norm_spikes_with_loss"))
        first = c.evidence.get("first_spike_step")
        what = f"{n} " if n is not None else ""
        where = f" (first at step {first})" if isinstance(first, int) else ""
        head = (
            f"The loss shows {what}{c.label.removeprefix('isolated ')}{where}, and the log has "
            "no batch length to tell a bad batch from a long one (a loss summed over tokens, batches sorted or "
            "built once)"
        )
        cause = "spikes without batch statistics"
    else:
        c, period = f.causes[0], f.other_period or 0.0
        head = (
            f"The loss repeats every {period:.1f} steps (LD201), which {c.label} cannot cause (a resume explains "
            "the jump after it, never a period), and the log has no batch length to tell whether batching does"
        )
        cause = "a loss period without batch statistics"
    summary = f"{head}{ruled_out_text(ruled_out(f, megabatch_tested))}; to decide, {LOG_WHAT}."
    ev = evidence(f) | {f"cause_{k}": v for k, v in c.evidence.items()} | fixed_order_evidence(f)
    return Verdict("inconclusive", None, cause, summary, f"To decide, {LOG_WHAT}.", ev)


#: Causes a fixed batch order does not explain (they reshape the loss on their own): with one of
#: them present, the same-position correlation is not read as the pipeline's.
_NOT_ORDER = frozenset({"nan", "cyclic_lr", "resume"})


def fixed_order_decides(f: Facts) -> bool:
    """The loss alone shows batches fed in the same order every epoch, and nothing else reshapes it."""
    fo = f.fixed_order
    return f.order is None and fo is not None and fo.fixed and not {c.key for c in f.causes} & _NOT_ORDER


def fixed_order_evidence(f: Facts) -> EvidenceDict:
    """The same-position test's numbers (its shifted-position null, z and p: -v and JSON), or none."""
    fo = f.fixed_order
    if fo is None:
        return {}
    return {
        "fixed_order_r": fo.r,
        "fixed_order_null_mean": fo.null_mean,
        "fixed_order_null_sd": fo.null_sd,
        "fixed_order_z": fo.z,
        "fixed_order_p": fo.p_value,
        "fixed_order_positions": fo.pairs,
        "fixed_order_epoch_pairs": fo.epoch_pairs,
    }


def fixed_order_verdict(f: Facts) -> Verdict:
    """Static batches in a fixed order, from the loss's same-position correlation across epochs."""
    fo = f.fixed_order
    if fo is None:
        raise ValueError("fixed_order_verdict needs the fixed-order test (see fixed_order_decides)")
    summary = (
        f"The loss at the same position in consecutive epochs correlates r={fo.r:.2f} ({fo.pairs:,} "
        f"positions over {fo.epoch_pairs} epoch pair(s); the same epochs shifted give "
        f"{fo.null_mean:+.2f}): the same batches are fed in the same "
        "order every epoch (built once and never reshuffled: a DataLoader without shuffle over "
        f"pre-built batches, or a fixed list); {LOG_WHAT} to see whether that order is also by length."
    )
    ev = evidence(f) | fixed_order_evidence(f)
    return Verdict(
        "static",
        confidence(1.0 + (fo.z - MIN_Z) / 2),
        "static batches in a fixed order (from the loss)",
        summary,
        _buckets_hint(f, STATIC_FIX),
        ev,
    )
