"""Print the finding-code table (code, rule, severity, meaning, what to do) as Markdown."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from logdoctor.codes import RULES
from logdoctor.renderers.markdown import table


def codes_table() -> str:
    """The Markdown table of every registered finding code."""
    rows = [(f"`{r.code}`", f"`{r.name}`", r.severity.label, r.meaning, r.action) for r in RULES.values()]
    return "\n".join(table(("code", "rule", "severity", "meaning", "what to do"), rows)) + "\n"


if __name__ == "__main__":
    sys.stdout.write(codes_table())
