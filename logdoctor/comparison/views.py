"""Text, Markdown and HTML views of a comparison: the same rows, three last steps; plus the format registry."""

from __future__ import annotations

from collections.abc import Callable

from logdoctor import sanitize
from logdoctor.comparison import rows as r
from logdoctor.comparison.result import Comparison
from logdoctor.errors import ConfigError

HEADER: r.Row = ("", "baseline", "candidate", "change")


#: The text view fits this many columns: side by side when the cells allow, else stacked.
WIDTH = 80


def _table(lines: list[r.Row]) -> list[str]:
    widths = [max(len(row[i]) for row in lines) for i in range(4)]
    side = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in lines]
    if max(map(len, side)) <= WIDTH:
        return side
    return _stacked(lines[1:])


def _stacked(lines: list[r.Row]) -> list[str]:
    """One block per row: its label, then baseline, candidate and change, each wrapped at WIDTH."""
    import textwrap

    out = []
    for label, base, cand, change in lines:
        out.append(label)
        for head, cell in (("baseline", base), ("candidate", cand), ("change", change)):
            if cell:
                out += textwrap.wrap(cell, WIDTH, initial_indent=f"  {head + ':':<11}", subsequent_indent=" " * 13)
    return out


def render_text(c: Comparison) -> str:
    """Plain text: the answer, then per candidate the side-by-side table and the finding changes."""
    import textwrap

    term = sanitize.terminal  # names and values from the runs: shown, never obeyed
    out = [line for a in r.answers(c) for line in textwrap.wrap(term(a), WIDTH)]
    for v in c.versus:
        rows = sanitize.clean(r.rows(c.baseline, v), term)
        names = [f"{head:<11}{cell}" for head, cell in zip(("baseline", "candidate"), rows[0][1:3], strict=True)]
        out += ["", *names, "", *_table([HEADER, *rows[1:]])]
        out += [*textwrap.wrap(f"note: {term(v.like_with_like)}", WIDTH), ""] if v.like_with_like else [""]
        out += [
            line
            for label, text in r.changes(v)
            for line in textwrap.wrap(term(text), WIDTH, initial_indent=f"{label:<11}", subsequent_indent=" " * 11)
        ]
    return "\n".join(out) + "\n"


def _md(cell: str) -> str:
    return sanitize.markdown(cell) or " "


def render_markdown(c: Comparison) -> str:
    """GitHub-flavoured Markdown: the answer in bold, a table and a list per candidate."""
    out = ["## logdoctor compare", "", *(f"**{_md(a)}**" for a in r.answers(c))]
    for v in c.versus:
        out += ["", "| " + " | ".join(_md(h) for h in HEADER) + " |", "|---|---|---|---|"]
        out += ["| " + " | ".join(_md(x) for x in row) + " |" for row in r.rows(c.baseline, v)]
        out += ["", f"_note: {_md(v.like_with_like)}_"] if v.like_with_like else []
        out += ["", *(f"- **{_md(label)}**: {_md(text)}" for label, text in r.changes(v))]
    return "\n".join(out) + "\n"


def _html_body(c: Comparison) -> str:
    """The answer, then per candidate the side-by-side table and the finding changes, as HTML."""
    esc = sanitize.html  # names and values from the runs: shown as text, never as markup
    out = ["<h1>logdoctor compare</h1>", *(f'<p class="status"><b>{esc(a)}</b></p>' for a in r.answers(c))]
    for v in c.versus:
        cells = ["<tr>" + "".join(f"<th>{esc(h)}</th>" for h in HEADER) + "</tr>"]
        cells += ["<tr>" + "".join(f"<td>{esc(x)}</td>" for x in row) + "</tr>" for row in r.rows(c.baseline, v)]
        out.append(f"<table>{''.join(cells)}</table>")
        out += [f"<p><i>note: {esc(v.like_with_like)}</i></p>"] if v.like_with_like else []
        items = "".join(f"<li><b>{esc(label)}</b>: {esc(text)}</li>" for label, text in r.changes(v))
        out.append(f"<ul>{items}</ul>")
    return "\n".join(out)


def render_html(c: Comparison) -> str:
    """One self-contained page (the report's CSS, no script): the rows of the text view as tables."""
    from logdoctor.renderers.html import page

    return page("logdoctor compare", _html_body(c))


def html_fragment(c: Comparison) -> str:
    """``render_html``'s content as one element of another page (a notebook's output)."""
    from logdoctor.renderers.html import fragment

    return fragment(_html_body(c))


def _render_json(c: Comparison) -> str:
    from logdoctor.comparison.jsondoc import render_json

    return render_json(c)


#: ``compare --format`` names and their renderers.
FORMATS: dict[str, Callable[[Comparison], str]] = {
    "text": render_text,
    "json": _render_json,
    "markdown": render_markdown,
    "html": render_html,
}


def renderer(fmt: str) -> Callable[[Comparison], str]:
    """The renderer of a ``--format`` name; ConfigError for an unknown one."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format for compare takes {', '.join(FORMATS)}; got {fmt!r}")
    return FORMATS[fmt]
