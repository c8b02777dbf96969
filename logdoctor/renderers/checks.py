"""The checks an analysis made, in words: how many ran, and which could not and why (grouped by
reason), so that "no problems found" reads as "among these checks"."""

from __future__ import annotations

from collections.abc import Sequence

from logdoctor.model import Check


def skipped_by_reason(checks: Sequence[Check]) -> dict[str, list[str]]:
    """Reason -> the names of the checks skipped for it, in the order the analysis made them."""
    out: dict[str, list[str]] = {}
    for c in checks:
        if not c.ran:
            out.setdefault(c.skipped, []).append(c.name)
    return out


def checks_phrase(checks: Sequence[Check]) -> str:
    """``"all 23 ran"`` or ``"18 of 23 ran; not: no lr, no eval metric (4)"``: each reason once, with
    how many checks it stopped when more than one (the JSON and HTML reports name them)."""
    ran = sum(c.ran for c in checks)
    skipped = skipped_by_reason(checks)
    if not skipped:
        return f"all {len(checks)} ran"
    why = ", ".join(reason + (f" ({len(names)})" if len(names) > 1 else "") for reason, names in skipped.items())
    return f"{ran} of {len(checks)} ran; not: {why}"


def check_dicts(checks: Sequence[Check]) -> list[dict[str, object]]:
    """The checks as the JSON report spells them: ``{name, ran, skipped}`` (skipped null when it ran)."""
    return [{"name": c.name, "ran": c.ran, "skipped": c.skipped or None} for c in checks]
