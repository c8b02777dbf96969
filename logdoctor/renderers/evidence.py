"""Evidence in plain words: a table of sentence templates for known evidence keys, and formats."""

from __future__ import annotations

import math

from logdoctor.model import Evidence, EvidenceValue

#: Known evidence keys: (keys that must all be present, sentence template). The first template
#: whose keys are all present consumes them; keys no template knows are written generically.
EVIDENCE_TEMPLATES: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("len_loss_rho", "len_loss_p"),
        "loss vs batch mean length: Spearman ρ = {len_loss_rho}, {len_loss_p}",
    ),
    (("len_loss_rho",), "loss vs batch mean length: Spearman ρ = {len_loss_rho}"),
    (("len_order_rho",), "batch length vs position in the epoch: Spearman ρ = {len_order_rho}"),
    (("sorted_epoch_frac",), "{sorted_epoch_frac} of epochs are ordered by batch length"),
    (("recurrence_frac",), "{recurrence_frac} of batch signatures recur in every epoch"),
    (("fresh_batch_frac",), "{fresh_batch_frac} of batches are new in each epoch"),
    (
        ("period_steps", "steps_per_epoch"),
        "loss period {period_steps} steps, epoch length {steps_per_epoch} steps",
    ),
    (("period_steps",), "loss period: {period_steps} steps"),
    (("peak_power_ratio",), "periodogram peak {peak_power_ratio}× the median power"),
    (("period_p",), "period significance: {period_p}"),
    (("robust_z",), "loss {robust_z} robust standard deviations (MAD) above its local median"),
    (("grad_norm_z",), "gradient norm {grad_norm_z} robust standard deviations above its median"),
    (("n_spikes", "n_steps"), "{n_spikes} spikes in {n_steps} steps"),
    (("n_spikes",), "{n_spikes} spikes"),
    (
        ("nonfinite_steps", "first_bad_step"),
        "{nonfinite_steps} steps with NaN/inf loss, the first at step {first_bad_step}",
    ),
    (("nonfinite_steps",), "{nonfinite_steps} steps with NaN/inf loss"),
    (("level_before", "level_after"), "loss level {level_before} before, {level_after} after"),
    (("lr_period_steps",), "learning-rate schedule period: {lr_period_steps} steps"),
    (("lr_loss_rho",), "loss vs learning rate: Spearman ρ = {lr_loss_rho}"),
    (("resume_step",), "run resumed at step {resume_step}"),
)

_KIND_BY_SUFFIX: tuple[tuple[str, str], ...] = (
    ("_p", "p"),
    ("_frac", "pct"),
    ("_rho", "r"),
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


def evidence_sentences(ev: Evidence) -> list[str]:
    """Evidence in plain words: known keys through their templates, the rest generically."""
    left = dict(ev)
    out: list[str] = []
    for keys, template in EVIDENCE_TEMPLATES:
        if all(k in left for k in keys):
            out.append(template.format(**{k: format_value(left.pop(k), _kind(k)) for k in keys}))
    out += [f"{k.replace('_', ' ')}: {format_value(v, _kind(k))}" for k, v in left.items()]
    return out
