"""The Markdown report (pull-request comments, ``$GITHUB_STEP_SUMMARY``), from the shared rows."""

from __future__ import annotations

from collections.abc import Sequence

from logdoctor import sanitize
from logdoctor.model import Outcome, Report
from logdoctor.renderers.base import Renderer
from logdoctor.renderers.findinglist import finding_entries
from logdoctor.renderers.rows import SUMMARY_HEADER, build_rows, sparkline, summary_rows, summary_title


def cell(text: str) -> str:
    """Raw text safe inside a Markdown table cell (``sanitize.markdown``: pipes and line breaks too)."""
    return sanitize.markdown(text)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured Markdown table of cells already made safe (``sanitize.markdown``)."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


class MarkdownRenderer(Renderer):
    """Health, batching line, run at a glance, findings and evidence, as GitHub-flavoured Markdown."""

    name = "markdown"
    extension = ".md"

    def render(self, report: Report) -> str:
        raw = build_rows(report)
        rows = sanitize.clean(raw, sanitize.markdown)  # every text, the log's and ours: shown, never markup
        if self.verbosity < 0:
            return rows.verdict_line + "\n"
        out = [f"### logdoctor: {sanitize.code_span(raw.path)}", ""]
        out += [f"- **{level.upper()}** {text}" if level else f"- _{text}_" for level, text in rows.headline]
        out += ["", rows.batching]
        if len(rows.todo) == 1:
            out += ["", f"**What to do:** {rows.todo[0]}"]
        elif rows.todo:
            out += ["", "**What to do:**", *(f"- {hint}" for hint in rows.todo)]
        out += ["", *table(("run at a glance", ""), rows.facts)]
        spark = sparkline(report, width=60)
        if spark:
            out += ["", f"loss: `{spark}`"]
        out += ["", "#### Findings", ""]
        entries, footer = finding_entries(rows, self.verbosity)
        if not rows.findings:
            out.append("No findings.")
        listed = [e for e in entries if not isinstance(e, str)]
        if listed:
            header = ("severity", "code", "rule", "steps", "message")
            out += table(header, [(f.severity, f.code, f.rule, f.steps, f.message) for f in listed])
        out += [f"_{x}_" for x in (*(e for e in entries if isinstance(e, str)), footer) if x]  # made safe above
        if self.verbosity > 0:
            for f in listed:
                out += ["", f"**{f.code} {f.rule}** ({f.where}): {f.hint}"]
                out += [f"- {e}" for e in f.evidence]
        if rows.earlier_title:
            lines = rows.earlier_detail if self.verbosity > 0 and rows.earlier_detail else ()
            rest = tuple(x for x in rows.earlier if not x.startswith("run ")) if lines else rows.earlier
            out += ["", f"#### {rows.earlier_title}", "", *(f"- {x}" for x in (*lines, *rest))]
        lines = rows.evidence_detail if self.verbosity > 0 else rows.evidence if rows.fault else ()
        if lines:
            out += ["", "#### Evidence behind the batching verdict", ""]
            out += [f"- {s}" for s in lines]
        if rows.stats_hint:
            out += ["", f"**Hint:** {rows.stats_hint}"]
        if rows.notes:
            out += ["", *(f"> note: {n}" for n in rows.notes)]
        return "\n".join(out) + "\n"

    def render_outcomes(self, outcomes: Sequence[Outcome]) -> str:
        body = [self.render(r) for r in self.per_run_reports(outcomes)]
        if len(outcomes) > 1 and self.verbosity >= 0:
            rows = sanitize.clean(summary_rows(outcomes, run_width=200), sanitize.markdown)
            title = sanitize.markdown(summary_title(outcomes).lower())
            body.append("\n".join([f"### logdoctor {title}", "", *table(SUMMARY_HEADER, rows)]) + "\n")
        return ("" if self.verbosity < 0 else "\n").join(body)
