"""The findings list of the human reports: grouped by rule, each message once, every truncation said."""

from __future__ import annotations

from logdoctor.renderers.rows import BATCHING_LINE_CODES, FindingRow, Rows

#: Findings of one rule listed without ``-v`` before the rest are counted in one line.
PER_RULE = 3
#: The configuration section of each rule whose detector reports only its largest events.
_CAPPED_BY = {"LD101": "spikes"}

Entry = FindingRow | str


def _groups(findings: tuple[FindingRow, ...]) -> list[list[FindingRow]]:
    groups: dict[str, list[FindingRow]] = {}
    for f in findings:
        groups.setdefault(f.code, []).append(f)
    return list(groups.values())


def truncation(group: list[FindingRow], shown: int, verbosity: int) -> str:
    """What a listing of ``shown`` of a rule's findings leaves out, said (``""`` when nothing).

    ``10 of 35 loss-spike events shown (largest first); -v lists all 10 reported, spikes.max_findings
    reports more``: the detector reports its largest events only, and the list shows fewer still.
    """
    f = group[0]
    total = max([len(group), *(g.of_total for g in group)])
    if shown >= total:
        return ""
    what = f"{f.rule} findings" if total == len(group) else f"{f.rule} events"
    order = "" if total == len(group) else " (largest first)"
    parts = [f"{shown} of {total} {what} shown{order}"]
    if shown < len(group) and verbosity <= 0:
        parts.append(
            f"-v lists {'all' if total == len(group) else 'the'} {len(group)}"
            + (" reported" if total > len(group) else "")
        )
    if total > len(group) and f.code in _CAPPED_BY:
        parts.append(f"{_CAPPED_BY[f.code]}.max_findings in the configuration reports more")
    return "; ".join(parts)


def finding_entries(rows: Rows, verbosity: int) -> tuple[list[Entry], str]:
    """The findings to print, grouped by rule (each followed by its truncation line), and a footer
    for the symptoms the verdict explains (``-v`` lists them all)."""
    if verbosity > 0:
        listed = rows.findings
        footer = ""
    else:
        listed = tuple(f for f in rows.findings if not f.explained_by and f.code not in BATCHING_LINE_CODES)
        hidden = [f for f in rows.findings if f.explained_by]
        footer = ""
        if hidden:
            causes = ", ".join(sorted({f.explained_by for f in hidden}))
            codes = ", ".join(sorted({f.code for f in hidden}))
            plural = "s" if len(hidden) > 1 else ""
            footer = f"+ {len(hidden)} more: symptom{plural} of {causes} ({codes}); -v lists them"
    out: list[Entry] = []
    for group in _groups(listed):
        shown = group if verbosity > 0 else group[:PER_RULE]
        out.extend(shown)
        note = truncation(group, len(shown), verbosity)
        if note:
            out.append(note)
    return out, footer


def header(f: FindingRow) -> str:
    """A finding's header line: ``warning  LD101 loss-spike  steps 3-9``."""
    return f"{f.severity:<8} {f.code} {f.rule}  {f.where}"
