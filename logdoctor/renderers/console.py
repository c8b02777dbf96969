"""The human report in the terminal (interim plain version; rich rendering: issue 4)."""

from __future__ import annotations

from logdoctor.model import Report
from logdoctor.renderers.base import Renderer


class ConsoleRenderer(Renderer):
    """Verdict, run summary and findings as readable text."""

    name = "text"
    extension = ".txt"

    def render(self, report: Report) -> str:
        v, s = report.verdict, report.series
        lines = [
            f"{report.meta.path}: batching verdict: {v.batching} (confidence {v.confidence:.2f}) - {v.cause}",
            f"  {v.summary}",
            f"  {s.steps} steps ({s.first_step}..{s.last_step}), format {report.meta.format}",
        ]
        for f in report.findings:
            where = f"steps {f.first_step}-{f.last_step}" if f.first_step is not None else "run"
            lines.append(f"  {f.code} {f.rule} [{f.severity.label}] {where}: {f.message}")
        return "\n".join(lines) + "\n"
