"""The Report of a probe: the pipeline's report on the walk, with the sampler's profile and its fix
priced on the samples' own lengths."""

from __future__ import annotations

import dataclasses

from logdoctor.diagnosis.prescription import reprice
from logdoctor.diagnosis.verdicts import LOG_FP_ADVICE, LOG_FP_HINT
from logdoctor.model import Report, Verdict
from logdoctor.probing import profile as measure
from logdoctor.probing.feed import Feed
from logdoctor.probing.lengths import LengthTable
from logdoctor.probing.ranks import Lanes
from logdoctor.probing.walk import Settings, Walked
from logdoctor.samplerfacts import SamplerProfile


def _samples(feed: Feed, walked: Walked) -> int | None:
    """The data set's size, else the distinct samples the first epoch drew."""
    if feed.dataset is not None and not feed.stream:
        try:
            return len(feed.dataset)
        except TypeError:
            pass
    return measure.first_samples(walked) or None


def notes(walked: Walked, feed: Feed, table: LengthTable | None, settings: Settings) -> list[str]:
    """What the walk could not do or had to assume, in words."""
    out = []
    if walked.bounded:
        out.append(
            f"stopped at {settings.max_batches:,} batches (--max-batches) in epoch {walked.epochs}: "
            "an endless sampler or stream, or a bound too low; the report covers the batches read"
        )
    if walked.one_shot:
        out.append(
            "the target is a one-pass iterator, so one epoch was read; return the sampler (or a "
            "function that builds it) to compare epochs"
        )
    elif 0 < walked.epochs < settings.epochs and not walked.bounded:
        out.append(f"the sampler yielded nothing in epoch {walked.epochs + 1}, so {walked.epochs} epoch(s) were read")
    if feed.stream:
        out.append(
            "an IterableDataset has no sample indices: its samples were streamed (the data set's own "
            "code ran, nothing was collated) and each is known by its content"
        )
    elif table is None:
        out.append(
            "no sample lengths (no lengths attribute, no input_ids in the samples): only batch "
            "composition is judged; give --length-key KEY or --lengths FILE"
        )
    if not settings.set_epoch:
        out.append("set_epoch was not called (--no-set-epoch): walked as a loop that never calls it")
    return out


#: What decides recomposition for a probe: a second epoch (every batch is fingerprinted already).
WALK_ADVICE = "walk two epochs or more (--epochs; a finite sampler, or a larger --max-batches)"


def _walk_advice(verdict: Verdict) -> Verdict:
    """An undecided verdict advises what would decide it for a walk, not for a log."""
    if verdict.batching != "inconclusive" or LOG_FP_ADVICE not in verdict.summary:
        return verdict
    hint = WALK_ADVICE[0].upper() + WALK_ADVICE[1:] + "." if verdict.hint == LOG_FP_HINT else verdict.hint
    return dataclasses.replace(verdict, summary=verdict.summary.replace(LOG_FP_ADVICE, WALK_ADVICE), hint=hint)


def with_profile(
    report: Report, walked: Walked, feed: Feed, lanes: Lanes, table: LengthTable | None, settings: Settings, name: str
) -> Report:
    """``report`` with ``sampler`` filled in and, when the verdict blames the sampler, its fix priced
    on the lengths of the samples drawn (the hint of its finding too)."""
    own, per_batch = measure.efficiency(walked)
    by_epoch, share = measure.recurrence(walked)
    samples, size = _samples(feed, walked), measure.modal_size(walked)
    drawn = measure.first_lengths(walked)
    fix, plan, why = measure.price(walked, own, drawn) if own is not None else (None, None, "")
    lengths_source = "each streamed sample" if feed.stream else table.source if table is not None else ""
    sampler = SamplerProfile(
        target=name,
        chain=feed.chain,
        samples=samples,
        epochs=walked.epochs,
        batches=walked.count,
        steps=walked.steps,
        world_size=lanes.world_size,
        ranks=lanes.how,
        grad_accum=feed.grad_accum,
        set_epoch=walked.hooked,
        bounded=walked.bounded,
        max_batches=settings.max_batches,
        lengths_source=lengths_source,
        efficiency=own,
        padding=measure.spread(per_batch),
        tokens=measure.spread(measure.real_tokens(walked)) if own is not None else None,
        padded=measure.spread(measure.padded_tokens(walked)) if own is not None else None,
        recurrence_by_epoch=by_epoch,
        recurrence=share,
        recurrence_chance=measure.chance(walked, samples, size) if samples and size else None,
        batch_size=size,
        fix=fix,
        notes=tuple([*notes(walked, feed, table, settings), *([why] if why else [])]),
    )
    verdict = _walk_advice(report.verdict)
    if plan is not None:
        verdict = reprice(verdict, plan, int((drawn > 0).sum()))
    findings = tuple(
        dataclasses.replace(f, hint=verdict.hint) if f.hint and f.hint == report.verdict.hint else f
        for f in report.findings
    )
    return dataclasses.replace(report, verdict=verdict, findings=findings, sampler=sampler)
