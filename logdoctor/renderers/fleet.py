"""The fleet report: a summary table worst first with counts per status and rule (text), the list of
documents (JSON), or an index page linking each run's own HTML report written beside it (HTML)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from logdoctor import sanitize
from logdoctor.model import RunResult
from logdoctor.renderers.labels import STATUS_LABELS, UNREADABLE
from logdoctor.renderers.rows import common_dir, shorten_middle, spark_blocks

#: Worst first: a run that could not be read, then by its status (labels.STATUS_LABELS, best first).
STATUS_ORDER = (UNREADABLE, *reversed(STATUS_LABELS))
HEADER = ("run", "steps", "status", "worst problem", "batching", "loss")


def worst_first(results: Sequence[RunResult]) -> list[int]:
    """Indices of ``results`` sorted worst first (input order among equals)."""
    rank = {s: i for i, s in enumerate(STATUS_ORDER)}
    return sorted(range(len(results)), key=lambda i: (rank.get(results[i].status, len(rank)), i))


def counts_lines(results: Sequence[RunResult]) -> list[str]:
    """``N runs: a error, b warning, c ok`` and ``rules: divergence 4, ...`` (most frequent first)."""
    by_status = Counter(r.status for r in results)
    parts = [f"{by_status[s]} {s}" for s in STATUS_ORDER if by_status[s]]
    lines = [f"{len(results)} run{'s' if len(results) != 1 else ''}: {', '.join(parts)}"]
    rules = Counter(rule for r in results for rule in set(r.rules))
    if rules:
        ranked = sorted(rules.items(), key=lambda x: (-x[1], x[0]))
        lines.append("runs per rule: " + ", ".join(f"{k} {n}" for k, n in ranked))
    return lines


def table_rows(results: Sequence[RunResult], run_width: int = 40) -> list[tuple[str, ...]]:
    """One row per run, worst first: run, steps, status, worst problem, batching, loss sparkline."""
    base = common_dir([r.path for r in results])
    rows: list[tuple[str, ...]] = []
    for i in worst_first(results):
        r = results[i]
        name = shorten_middle(sanitize.terminal(r.path[len(base) :]), run_width)
        steps = f"{r.steps:,}" if r.steps is not None else "-"
        rows.append((name, steps, r.status, sanitize.terminal(r.worst), r.batching, spark_blocks(r.spark[::3])))
    return rows


def render_fleet_text(results: Sequence[RunResult]) -> str:
    """The summary table, worst first, then the counts."""
    rows = [HEADER, *table_rows(results)]
    widths = [max(len(row[c]) for row in rows) for c in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    base = common_dir([r.path for r in results])
    title = f"Fleet (in {sanitize.terminal(base)})" if base else "Fleet"
    return "\n".join([title, *lines, "", *counts_lines(results)]) + "\n"


def render_fleet_json(results: Sequence[RunResult]) -> str:
    """The list of the runs' documents, in input order (as ``-f json`` of several inputs)."""
    docs = [json.loads(r.document) for r in results]
    return json.dumps(sanitize.clean(docs, sanitize.redact), indent=2, allow_nan=False) + "\n"


def page_name(index: int, path: str) -> str:
    """The file name of run ``index``'s own report in the index's folder (safe on every file system)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", path.rstrip("/").rsplit("/", 1)[-1])[:60].strip("._") or "run"
    return f"{index:04d}-{stem}.html"


def _spark_svg(values: Sequence[float], width: int = 160, height: int = 28) -> str:
    finite = [v for v in values if v == v and abs(v) != float("inf")]
    if not finite:
        return ""
    lo, hi = min(finite), max(finite)
    span = hi - lo or 1.0
    step = width / max(1, len(values) - 1)
    pts = " ".join(
        f"{i * step:.1f},{height - 2 - (v - lo) / span * (height - 4):.1f}"
        for i, v in enumerate(values)
        if v == v and abs(v) != float("inf")
    )
    return (
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f'<polyline fill="none" stroke="#3367d6" stroke-width="1.3" points="{pts}"/></svg>'
    )


INDEX_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:4px 8px;text-align:left}
th{background:#f6f6f6}.ok{color:#1e6b35}.warning{color:#8a4b00;font-weight:600}.error,.unreadable{color:#a3221b;font-weight:600}
svg{display:block}"""


def render_fleet_index(results: Sequence[RunResult], pages: Sequence[str | None]) -> str:
    """The index page: the counts, then a row per run (worst first) with its loss sparkline and
    status, linking to its own report ``pages[i]`` (None: no report, the error is shown)."""
    esc = sanitize.html
    base = common_dir([r.path for r in results])
    rows = []
    for i in worst_first(results):
        r = results[i]
        name = esc(r.path[len(base) :])
        page = pages[i]
        link = f'<a href="{esc(page)}">{name}</a>' if page else name
        steps = f"{r.steps:,}" if r.steps is not None else "-"
        rows.append(
            f'<tr><td>{link}</td><td>{steps}</td><td class="{esc(r.status)}">{esc(r.status)}</td>'
            f"<td>{esc(r.worst)}</td><td>{esc(r.batching)}</td><td>{_spark_svg(r.spark)}</td></tr>"
        )
    head = "".join(f"<th>{h}</th>" for h in HEADER)
    counts = "".join(f"<p>{esc(line)}</p>" for line in counts_lines(results))
    title = f"logdoctor fleet report{f' ({esc(base)})' if base else ''}"
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>{title}</title><style>{INDEX_CSS}</style>"
        f"</head><body><h1>{title}</h1>{counts}<table><tr>{head}</tr>{''.join(rows)}</table></body></html>\n"
    )


class PageWriter:
    """Writes each run's own HTML report into the fleet's folder as it arrives, and the index last:
    the driver never holds the pages (1.5-6 GB for 100k runs)."""

    def __init__(self, folder: str, inputs: Sequence[str] = ()) -> None:
        """Raises:
        OutputError: ``folder`` is stdout or an existing file."""
        from logdoctor.errors import OutputError

        if folder == "-":
            raise OutputError("-f html of a fleet writes a folder: name it with -o FOLDER")
        if Path(folder).exists() and not Path(folder).is_dir():
            raise OutputError(f"{folder}: not a folder (-f html of a fleet writes index.html and a page per run)")
        self.root = Path(folder)
        self.inputs = tuple(inputs)

    def page(self, index: int, result: RunResult) -> RunResult:
        """Write run ``index``'s page (when it has one); the result without it."""
        import dataclasses

        from logdoctor.renderers.output import write_output

        if result.html is None:
            return result
        write_output(result.html, str(self.root / page_name(index, result.path)), inputs=self.inputs)
        return dataclasses.replace(result, html=None)

    def index(self, results: Sequence[RunResult]) -> None:
        """``index.html`` of every result (``page`` numbered them; skipped files left out), linking
        the page of each run that has a report."""
        from logdoctor.renderers.output import write_output

        pairs = [
            (r, page_name(i, r.path) if r.steps is not None else None) for i, r in enumerate(results) if not r.skipped
        ]
        index = render_fleet_index([r for r, _ in pairs], [p for _, p in pairs])
        write_output(index, str(self.root / "index.html"), inputs=self.inputs)
