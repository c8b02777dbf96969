"""A probe's sampler profile as (label, value) rows of the run at a glance, shared by every human report."""

from __future__ import annotations

from logdoctor.samplerfacts import FixPrice, SamplerProfile, Spread


def _pct(x: float) -> str:
    return f"{x:.1%}" if x < 0.995 else f"{x:.0%}"


def _chance(x: float) -> str:
    """A chance level: ``0%`` for one too small to print as a share, ``1e-36`` spelled when tiny."""
    if x == 0:
        return "0"
    return f"{x:.0%}" if x >= 0.005 else f"{x:.0e}"


def _tokens(s: Spread) -> str:
    return f"median {s.median:,.0f} (5-95%: {s.p5:,.0f}-{s.p95:,.0f}, max {s.high:,.0f})"


def _walked(p: SamplerProfile) -> str:
    size = f" of {p.batch_size}" if p.batch_size else ""
    epochs = f"{p.epochs} epoch{'s' if p.epochs != 1 else ''}"
    accum = f", {p.grad_accum} per optimizer step" if p.grad_accum > 1 else ""
    bound = f", stopped at --max-batches {p.max_batches:,}" if p.bounded else ""
    hooks = f"; set_epoch called on {', '.join(p.set_epoch)}" if p.set_epoch else ""
    return f"{epochs}, {p.batches:,} batches{size}{accum}{bound}{hooks}"


def _recurrence(p: SamplerProfile) -> str:
    if p.recurrence is None:
        return "one epoch walked: nothing to compare"
    epochs = "epoch 2" if p.epochs == 2 else f"epochs 2-{p.epochs}"
    text = f"{_pct(p.recurrence)} of the batches of {epochs} already drawn in an earlier epoch"
    if p.recurrence_chance is not None:
        text += f" (by chance: {_chance(p.recurrence_chance)})"
    if len(p.recurrence_by_epoch) > 2:
        text += "; by epoch " + ", ".join(_pct(x) for x in p.recurrence_by_epoch[1:])
    return text


def _fix(f: FixPrice, samples: int | None) -> str:
    this = f", {f.bucketed_vs_this:.2f}x this sampler" if f.bucketed_vs_this is not None else ""
    drawn = f"; priced on a uniform draw of {f.sequences:,} samples" if samples and f.sequences < samples else ""
    return (
        f"a bucketed shuffle with {f.buckets} buckets at {f.token_budget:,} tokens per batch: "
        f"{_pct(f.efficiency_bucketed)} padding efficiency, {f.bucketed_vs_sorted:.0%} of sorted throughput "
        f"({f.bucketed_vs_random:.2f}x random{this}){drawn}"
    )


def sampler_facts(p: SamplerProfile) -> tuple[tuple[str, str], ...]:
    """The sampler, the walk, padding and tokens per batch, recurrence and the priced fix."""
    samples = f", {p.samples:,} samples" if p.samples is not None else ""
    rows = [("sampler", f"{p.chain}{samples}"), ("walked", _walked(p))]
    if p.world_size > 1:
        rows.append(("ranks", f"{p.world_size}: {p.ranks}"))
    rows.append(("lengths", f"from {p.lengths_source}" if p.lengths_source else "none (composition only)"))
    if p.efficiency is not None and p.padding is not None:
        rows.append(
            (
                "padding",
                f"{_pct(p.efficiency)} efficiency (real / padded tokens); per batch median "
                f"{_pct(p.padding.median)}, worst 5% below {_pct(p.padding.p5)}",
            )
        )
    if p.tokens is not None and p.padded is not None:
        rows.append(("tokens/batch", f"real {_tokens(p.tokens)}; padded {_tokens(p.padded)}"))
    rows.append(("recurrence", _recurrence(p)))
    if p.fix is not None:
        rows.append(("the fix", _fix(p.fix, p.samples)))
        rows.append(("buckets", "upper bounds " + ", ".join(f"{b:,}" for b in p.fix.boundaries)))
    return tuple(rows)
