"""GitHub Actions workflow commands: one annotation per finding, pointing at its log line."""

from __future__ import annotations

from collections.abc import Sequence

from logdoctor import sanitize
from logdoctor.model import Finding, Outcome, Report, Severity
from logdoctor.renderers.base import Renderer
from logdoctor.renderers.rows import BATCHING_LINE_CODES, batching_line, plot_health, where
from logdoctor.renderers.runlines import problem_line

#: Finding severity -> workflow command.
COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


#: Escape a workflow-command message: control characters shown escaped (the Actions log renders
#: ANSI colours), then GitHub's ``%``, CR, LF. A ``::`` left in a message is inert: a command
#: starts only at a line's start, and no line break survives.
escape_data = sanitize.workflow_data
#: Escape a workflow-command property value (as data, plus ``:`` and ``,``, so ``::`` cannot end it).
escape_property = sanitize.workflow_property


def command(kind: str, message: str, **props: str | int | None) -> str:
    """One workflow command line, e.g. ``::warning file=a.log,line=3,title=T::message``."""
    given = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v is not None)
    return f"::{kind} {given}::{escape_data(message)}" if given else f"::{kind}::{escape_data(message)}"


def annotation(path: str, f: Finding) -> str:
    """The workflow command for one finding."""
    title = f"{f.code} {f.rule}"
    message = f"{f.message} ({where(f)}). {f.hint}".rstrip()
    return command(COMMANDS[f.severity], message, file=path, line=f.line, title=title)


def info_notice(path: str, infos: Sequence[Finding]) -> list[str]:
    """Info findings as one notice: its own annotation for one, a summary for several (GitHub
    shows ten notices per step, and remarks must not crowd out the problems)."""
    if len(infos) <= 1:
        return [annotation(path, f) for f in infos]
    listed = "; ".join(f"{f.code} {f.rule} ({where(f)}{f', log line {f.line}' if f.line else ''})" for f in infos)
    return [
        command(
            "notice",
            f"{listed}. Details: logdoctor analyze -v.",
            file=path,
            title=f"logdoctor: {len(infos)} info findings",
        )
    ]


class GithubRenderer(Renderer):
    """``--format github``: annotations for a workflow log (warnings and errors one each, info
    findings in one notice), plus the health and batching line as a notice."""

    name = "github"
    documents_errors = True
    extension = ".txt"

    def render(self, report: Report) -> str:
        path = report.meta.path
        health = plot_health(report)  # the problems themselves follow as annotations
        lines = [
            command(
                "notice",
                f"{health}. {batching_line(report)}",
                file=path,
                title=f"logdoctor: {report.status}",
            )
        ]
        # the batching-undecidable finding is the notice's batching line: said once
        shown = [f for f in report.findings if f.code not in BATCHING_LINE_CODES]
        lines += [annotation(path, f) for f in shown if f.severity > Severity.INFO]
        lines += info_notice(path, [f for f in shown if f.severity == Severity.INFO])
        # earlier runs appended to the log: a notice each (history the user re-ran never fails CI)
        lines += [
            command(
                "notice",
                problem_line(p),
                file=path,
                line=p.findings[0].line or p.first_line,
                title=f"logdoctor: earlier run {p.index} of {p.of}: {p.status}",
            )
            for p in report.earlier_runs
            if p.findings
        ]
        return "\n".join(lines) + "\n"

    def render_outcomes(self, outcomes: Sequence[Outcome]) -> str:
        out = []
        for o in outcomes:
            if o.report is None:
                out.append(command("error", o.error or "cannot analyse", file=o.path, title="logdoctor") + "\n")
            else:
                out.append(self.render(o.report))
        return "".join(out)
