"""Evidence in plain words: a table of sentence templates for known evidence keys, and formats."""

from __future__ import annotations

import math

from logdoctor.model import Evidence, EvidenceValue

#: Known evidence keys: (keys that must all be present, sentence template). The first template
#: whose keys are all present consumes them; keys no template knows are written generically.
EVIDENCE_TEMPLATES: tuple[tuple[tuple[str, ...], str], ...] = (
    # the batching verdict (analyzers/verdicts.py)
    (
        ("loss_length_rho", "loss_length_p", "loss_length_ci_low", "loss_length_ci_high"),
        "loss vs batch length: Spearman ρ = {loss_length_rho} (95% CI {loss_length_ci_low} to "
        "{loss_length_ci_high}), {loss_length_p}",
    ),
    (
        ("loss_length_rho", "loss_length_p"),
        "loss vs batch length: Spearman ρ = {loss_length_rho}, {loss_length_p}",
    ),
    (
        ("loss_length_rho", "loss_length_ci_low", "loss_length_ci_high"),
        "loss vs batch length: Spearman ρ = {loss_length_rho} (95% CI {loss_length_ci_low} to {loss_length_ci_high})",
    ),
    (("loss_length_rho",), "loss vs batch length: Spearman ρ = {loss_length_rho}"),
    (("lag1_len_mean",), "batch length vs the previous batch's: lag-1 rank correlation {lag1_len_mean}"),
    (("monotone_frac", "direction"), "{monotone_frac} of step-to-step length changes go one way ({direction})"),
    (("length_resets", "reset_spacing"), "{length_resets} length resets, every {reset_spacing} steps"),
    (
        ("recurrence_fraction", "recurrence_chance", "recurrence_expected_if_static", "recurrence_kind"),
        "{recurrence_fraction} of batches were already seen in an earlier epoch (by {recurrence_kind}); "
        "{recurrence_chance} expected by chance, {recurrence_expected_if_static} if composition were static",
    ),
    (("recurrence_fraction",), "{recurrence_fraction} of batches were already seen in an earlier epoch"),
    (
        ("steps_per_epoch", "epochs", "epoch_source"),
        "{epochs} epochs of {steps_per_epoch} steps (from the {epoch_source})",
    ),
    (("epoch_jump", "epoch_jump_z"), "loss jump at each epoch boundary: {epoch_jump} (z = {epoch_jump_z})"),
    (("epoch_jump",), "loss jump at each epoch boundary: {epoch_jump}"),
    (("period", "period_p_value"), "loss period {period} steps, {period_p_value}"),
    (("loss_lr_rho", "loss_lr_p"), "loss vs learning rate: Spearman ρ = {loss_lr_rho}, {loss_lr_p}"),
    (("loss_lr_rho",), "loss vs learning rate: Spearman ρ = {loss_lr_rho}"),
    (("lr_rerise",), "the learning rate climbs again by {lr_rerise} of its range after its first peak"),
    (("recurrence_chance",), "{recurrence_chance} of batches would recur by chance"),
    (("token_budget_estimate",), "token budget estimated from the log: {token_budget_estimate} tokens"),
    (
        (
            "fix_buckets",
            "fix_bucketed_vs_sorted_throughput",
            "fix_bucketed_vs_random_throughput",
            "fix_sequences",
            "fix_token_budget",
        ),
        "the fix priced on {fix_sequences} samples' own lengths, at {fix_token_budget} tokens per "
        "batch: a bucketed shuffle with {fix_buckets} buckets keeps {fix_bucketed_vs_sorted_throughput} of sorted "
        "throughput ({fix_bucketed_vs_random_throughput}x random)",
    ),
    (
        ("fix_buckets", "fix_bucketed_vs_sorted_throughput", "fix_bucketed_vs_random_throughput"),
        "the fix priced on this log's batches: a bucketed shuffle with {fix_buckets} buckets keeps "
        "{fix_bucketed_vs_sorted_throughput} of sorted throughput ({fix_bucketed_vs_random_throughput}x random)",
    ),
    # detectors
    (("period", "p_value", "power_ratio"), "loss period {period} steps ({power_ratio} of the power), {p_value}"),
    (("period", "steps_per_epoch"), "loss period {period} steps, epoch length {steps_per_epoch} steps"),
    (("robust_z", "local_median"), "{robust_z} robust SDs (MAD) above the local median of {local_median}"),
    (("robust_z",), "{robust_z} robust SDs (MAD) above the local median"),
    (("n_spikes", "n_steps"), "{n_spikes} spikes in {n_steps} steps"),
    (
        ("nonfinite_steps", "first_nonfinite_step"),
        "{nonfinite_steps} steps with NaN/inf loss, the first at step {first_nonfinite_step}",
    ),
    (("nonfinite_steps",), "{nonfinite_steps} steps with NaN/inf loss"),
    (("level_before", "level_after"), "loss level {level_before} before, {level_after} after"),
    (("resume_step",), "run resumed at step {resume_step}"),
    (("period",), "loss period {period} steps"),
)

_KIND_BY_SUFFIX: tuple[tuple[str, str], ...] = (
    ("_p", "p"),
    ("_p_value", "p"),
    ("p_value", "p"),
    ("_frac", "pct"),
    ("_fraction", "pct"),
    ("_chance", "pct"),
    ("_rerise", "pct"),
    ("_vs_sorted_throughput", "pct"),
    ("_if_static", "pct"),
    ("_rho", "r"),
    ("_ci_low", "r"),
    ("_ci_high", "r"),
    ("lag1_len_mean", "r"),
    ("_steps", "int"),
    ("_step", "int"),
    ("n_", "int"),
)


def _kind(key: str) -> str:
    for suffix, kind in _KIND_BY_SUFFIX:
        if key.endswith(suffix) or (suffix.endswith("_") and key.startswith(suffix)):
            return kind
    return "num"


def format_p(p: float) -> str:
    """A p-value in words: ``p < 1e-9`` below 1e-9, else ``p = 0.0031`` (two significant digits)."""
    if p < 1e-9:
        return "p < 1e-9"
    return f"p = {p:.2g}"


def format_value(value: EvidenceValue, kind: str = "num") -> str:
    """One evidence value as text, by kind (p, pct, r, int, num)."""
    if value is None:
        return "n/a"
    if isinstance(value, bool | str):
        return str(value).lower() if isinstance(value, bool) else value
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if kind == "p":
        return format_p(float(value))
    if kind == "pct":
        return f"{float(value):.0%}"
    if kind == "r":
        return f"{float(value):.2f}"
    if isinstance(value, int) or (kind == "int" and float(value).is_integer()):
        return f"{int(value):,}"
    return f"{float(value):.3g}"


def is_statistic(key: str) -> bool:
    """A test statistic rather than a plain quantity: p-values, z and t scores, a null's numbers.
    The default text report leaves them to ``-v`` and JSON (plain words first)."""
    return (
        _kind(key) == "p"
        or key in ("z", "t", "robust_z", "t_stat")
        or key.endswith(("_z", "_t_stat"))
        or "null" in key.split("_")
    )


def plain_evidence(ev: Evidence) -> list[str]:
    """The template sentences of ``ev`` without its statistics (:func:`is_statistic`)."""
    known, _ = split_evidence({k: v for k, v in ev.items() if not is_statistic(k)})
    return known


def format_for(key: str, value: EvidenceValue) -> str:
    """One evidence value as text, formatted by what its key names (a p-value, a share, ...)."""
    return format_value(value, _kind(key))


def split_evidence(ev: Evidence) -> tuple[list[str], list[str]]:
    """Evidence in plain words, as (sentences from templates, generic ``key: value`` lines for the
    keys no template knows). Keys without a value say nothing; the JSON output still has them."""
    left = dict(ev)
    known: list[str] = []
    for keys, template in EVIDENCE_TEMPLATES:
        if all(k in left and left[k] is not None for k in keys):
            known.append(template.format(**{k: format_value(left.pop(k), _kind(k)) for k in keys}))
    rest = [f"{k.replace('_', ' ')}: {format_value(v, _kind(k))}" for k, v in left.items() if v is not None]
    return known, rest


def evidence_sentences(ev: Evidence) -> list[str]:
    """Evidence in plain words: known keys through their templates, the rest generically."""
    known, rest = split_evidence(ev)
    return known + rest
