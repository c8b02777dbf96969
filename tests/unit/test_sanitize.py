"""The sanitisers, one per sink: hostile text shown, never obeyed; ordinary text unchanged."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from markdown_it import MarkdownIt

from logdoctor import sanitize

ORDINARY = "Loss 4.9 at step 412 (len_mean, 1-5% of training): see `logdoctor buckets`"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("http://alice:s3cret@host:5000/#/runs/1", "http://***@host:5000/#/runs/1"),
        ("mlflow+https://tok@host/x and s3://k:v@bucket/p", "mlflow+https://***@host/x and s3://***@bucket/p"),
        ("https://host/users/@me", "https://host/users/@me"),  # an @ in the path is no credential
        ("user@example.com", "user@example.com"),
    ],
)
def test_redact_removes_url_credentials_only(text: str, want: str) -> None:
    assert sanitize.redact(text) == want


def test_terminal_shows_controls_escaped() -> None:
    assert sanitize.terminal("a\x1b[31mb\x07\nc\u202ed\x9b") == "a\\x1b[31mb\\x07\\nc\\u202ed\\x9b"
    assert sanitize.terminal("a\nb\tc\x1b", keep="\n\t") == "a\nb\tc\\x1b"
    assert sanitize.terminal(ORDINARY) == ORDINARY


def test_markdown_renders_hostile_text_as_text() -> None:
    md = MarkdownIt("commonmark").enable("table")
    for hostile in (
        "<img src=x onerror=alert(1)>",
        "[a](javascript:alert(1))",
        "![i](http://x/a.png)",
        "<http://x>",
        "a` <b>x</b>",
        "&lt;script&gt;",
        "| a | b |",
    ):
        html = md.render(f"| h |\n|---|\n| {sanitize.markdown(hostile)} |\n\n{sanitize.markdown(hostile)}\n")
        assert "<img" not in html and "<a " not in html and "<b>" not in html and "<script" not in html, html
        assert html.count("<td>") == 1  # one cell: the pipes did not split it


def test_markdown_keeps_code_spans_and_words() -> None:
    assert sanitize.markdown(ORDINARY) == ORDINARY  # intraword _, balanced code spans, % untouched
    assert sanitize.markdown("p < 1e-9") == "p \\< 1e-9"
    assert sanitize.markdown("`a|b`") == "`a\\|b`"  # a pipe in a code span still splits a GFM cell


def test_code_span_fence_outgrows_the_backticks_inside() -> None:
    assert sanitize.code_span("runs/a.log") == "`runs/a.log`"
    assert sanitize.code_span("a`b``c") == "``` a`b``c ```"


def test_workflow_escaping() -> None:
    assert sanitize.workflow_data("50%\r\n\x1b[2J") == "50%25%0D%0A\\x1b[2J"
    assert sanitize.workflow_property("a::b,c") == "a%3A%3Ab%2Cc"


def test_xml_text_is_well_formed() -> None:
    el = ET.Element("t", name=sanitize.xml("a\x1b\x00b"))
    el.text = sanitize.xml("line\nnext\x07")
    back = ET.fromstring(ET.tostring(el))
    assert back.get("name") == "a\\x1b\\x00b" and back.text == "line\nnext\\x07"


def test_html_and_plot_text() -> None:
    assert sanitize.html("<b>\x1b") == "&lt;b&gt;\\x1b"
    assert sanitize.plot_text("b$\\frac{a}{$x") == "b\\$\\frac{a}{\\$x"


def test_clean_maps_every_string_of_rows_and_documents() -> None:
    doc = {"a": ["x\x1b", ("y\n", 3)], "b": 1.5, "c": None}
    assert sanitize.clean(doc, sanitize.terminal) == {"a": ["x\\x1b", ("y\\n", 3)], "b": 1.5, "c": None}
