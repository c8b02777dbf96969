"""Every registered renderer on every hand-built report, plus format-specific checks."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from importlib.resources import files

import jsonschema
import pytest

from logdoctor.model import Outcome, Severity
from logdoctor.renderers import RENDERERS, get_renderer
from logdoctor.renderers.console import ConsoleRenderer
from logdoctor.renderers.github import command, escape_data, escape_property
from logdoctor.renderers.jsonreport import JsonRenderer
from logdoctor.renderers.markdown import cell
from logdoctor.renderers.plots import plot_renderer_for
from logdoctor.renderers.rows import BATCHING_LINE_CODES
from tests.reportfactory import REPORTS

SCHEMA = json.loads(files("logdoctor").joinpath("schema/report.schema.json").read_text())
TEXT_FORMATS = [n for n, r in RENDERERS.items() if not r.is_binary]
MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "svg": b"<?xml", "pdf": b"%PDF-"}


@pytest.mark.parametrize("kind", sorted(REPORTS))
@pytest.mark.parametrize("name", TEXT_FORMATS)
def test_text_renderers_render_every_report(name: str, kind: str) -> None:
    report = REPORTS[kind]()
    out = get_renderer(name)(color=False, width=80).render(report)
    assert isinstance(out, str) and out.endswith("\n")
    assert report.meta.path in out
    for f in report.findings:
        # the batching-undecidable finding is said once, as the report's batching line
        assert f.code in out or (f.code in BATCHING_LINE_CODES and "Batching: not decidable" in out)


@pytest.mark.parametrize("kind", ["sorted", "static", "empty", "one_step"])
@pytest.mark.parametrize("name", [n for n, r in RENDERERS.items() if r.is_binary])
def test_plots_are_valid_images(name: str, kind: str) -> None:
    cls = RENDERERS[name]
    out = cls().render(REPORTS[kind]())
    assert isinstance(out, bytes) and out.startswith(MAGIC[name]) and len(out) > 5000
    assert cls.extension == f".{name}"


@pytest.mark.parametrize("name", ["svg", "pdf", "png"])
def test_plots_are_deterministic(name: str) -> None:
    report = REPORTS["not_batching"]()
    assert RENDERERS[name]().render(report) == RENDERERS[name]().render(report)


def test_plot_renderer_by_extension() -> None:
    assert plot_renderer_for("out/fig.SVG").name == "svg"
    with pytest.raises(Exception, match=r"\.png, \.svg or \.pdf"):
        plot_renderer_for("fig.jpg")


@pytest.mark.parametrize("kind", sorted(REPORTS))
def test_json_validates_against_schema(kind: str) -> None:
    jsonschema.validate(json.loads(JsonRenderer().render(REPORTS[kind]())), SCHEMA)


def test_json_many_with_error_validates() -> None:
    outcomes = [
        Outcome("a.log", REPORTS["sorted"](), exit_code=1),
        Outcome("b.log", None, "b.log: file is empty", 2),
    ]
    doc = json.loads(JsonRenderer().render_outcomes(outcomes))
    jsonschema.validate(doc, SCHEMA)
    assert doc[1] == {
        "format_version": 4,
        "source": {"path": "b.log"},
        "error": {"message": "b.log: file is empty", "exit_code": 2},
    }


def test_json_writes_nan_evidence_as_null() -> None:
    import dataclasses

    report = REPORTS["sorted"]()
    f = dataclasses.replace(report.findings[0], evidence={"robust_z": float("nan")})
    doc = json.loads(JsonRenderer().render(dataclasses.replace(report, findings=(f,))))
    assert doc["findings"][0]["evidence"] == {"robust_z": None}


@pytest.mark.parametrize("kind", sorted(REPORTS))
def test_junit_is_well_formed_with_one_case_per_rule(kind: str) -> None:
    from logdoctor.codes import RULES

    report = REPORTS[kind]()
    root = ET.fromstring(get_renderer("junit")().render(report))
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name", "").split()[0] for c in cases] == list(RULES)
    failed = {c.get("name", "").split()[0] for c in cases if c.find("failure") is not None}
    assert failed == {f.code for f in report.findings if f.severity > Severity.INFO}
    assert root.get("failures") == str(len(failed))
    remarks = {c.get("name", "").split()[0] for c in cases if c.find("system-out") is not None}
    assert remarks == {f.code for f in report.findings if f.code not in failed}


def test_junit_escapes_markup() -> None:
    import dataclasses

    report = REPORTS["sorted"]()
    f = dataclasses.replace(report.findings[0], message='<b>&"quoted"</b>')
    xml = get_renderer("junit")().render(dataclasses.replace(report, findings=(f,)))
    assert ET.fromstring(xml).find(".//failure").get("message").startswith('<b>&"quoted"</b>')  # type: ignore[union-attr]


def test_github_escaping() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"
    assert command("warning", "m", file="x,y.log", line=3, title=None) == "::warning file=x%2Cy.log,line=3::m"


def test_github_maps_severities_and_lines() -> None:
    out = get_renderer("github")().render(REPORTS["inconclusive"]()).splitlines()
    assert out[1].startswith("::error file=runs/no_stats.log,line=767,title=LD001 nonfinite-loss::Loss is NaN")
    assert out[-1].startswith("::notice file=runs/no_stats.log,line=511,title=LD003 resumed-run::")
    # LD504 is the first notice's batching line, said once, not a second annotation
    assert "Batching: not decidable" in out[0]
    assert not any("title=LD504" in x for x in out)


def test_markdown_cell_escapes_pipes_and_newlines() -> None:
    assert cell("a|b\nc") == "a\\|b\\\\nc"  # a line break is shown (\\n), never a new line


def test_console_without_color_has_no_escape_codes_and_fits_80() -> None:
    out = ConsoleRenderer(color=False, width=80, verbosity=1).render(REPORTS["sorted"]())
    assert "\x1b[" not in out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "loss vs batch length: Spearman ρ = 0.82, p < 1e-9" in out


def test_console_with_color_uses_ansi() -> None:
    assert "\x1b[" in ConsoleRenderer(color=True, width=80).render(REPORTS["sorted"]())


def test_console_honours_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in ConsoleRenderer(width=80).render(REPORTS["static"]())


def test_quiet_prints_only_the_verdict_line() -> None:
    out = ConsoleRenderer(verbosity=-1).render(REPORTS["sorted"]())
    assert out == (
        "runs/sorted.log: error (LD501 sorted-batching); 3 findings (1 error, 2 warnings); "
        "batching: length-sorted batches (93%)\n"
    )


def test_summary_table_lists_errors() -> None:
    outcomes = [
        Outcome("a.log", REPORTS["sorted"](), exit_code=1),
        Outcome("b.log", None, "b.log: file is empty", 2),
    ]
    out = ConsoleRenderer(color=False, width=100).render_outcomes(outcomes)
    assert " a.log     600   error        sorted-batching   sorted" in out
    assert " b.log       -   unreadable   file is empty     -" in out
    md = get_renderer("markdown")().render_outcomes(outcomes)
    assert "| a.log | 600 | error | sorted-batching | sorted |" in md


def test_envelope_keeps_spikes_and_bounds_points() -> None:
    import numpy as np

    from logdoctor.renderers.plots import envelope, thin

    y = np.zeros(1_000_000)
    y[654_321] = 9.0
    y[10] = np.nan
    xs, ys = envelope(np.arange(y.size), y, buckets=1000)
    assert xs.size == 2000 and np.nanmax(ys) == 9.0 and np.isfinite(ys).all()
    small = np.arange(10.0)
    assert envelope(small, small)[1] is small
    assert thin(1_000_000, 20_000).size == 20_000 and thin(5, 20_000).tolist() == [0, 1, 2, 3, 4]


def test_console_fits_80_columns_with_long_paths() -> None:
    import dataclasses

    from logdoctor.model import Outcome

    long = "/data/experiments/2026-12-01/very_long_run_name_with_many_words/rank0/train_stdout.log"
    base = REPORTS["sorted"]()
    rep = dataclasses.replace(base, run=dataclasses.replace(base.run, meta=dataclasses.replace(base.meta, path=long)))
    out = ConsoleRenderer(color=False, width=80).render_outcomes(
        [Outcome(long, rep), Outcome(long.replace("rank0", "rank1"), rep), Outcome("/x/missing.log", None, "gone", 2)]
    )
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    title = lines[0]
    assert title.startswith("╭─ logdoctor: /data/") and "train_stdout.log" in title  # shortened in the middle
    summary = out[out.index("Summary") :]
    assert "exit" not in summary.splitlines()[1]  # analyze exits 0: no exit column
    assert "status" in summary


@pytest.mark.parametrize("kind", sorted(REPORTS))
def test_every_format_tells_the_same_health(kind: str) -> None:
    report = REPORTS[kind]()
    status = report.status
    doc = json.loads(JsonRenderer().render(report))
    assert doc["status"] == status
    text = ConsoleRenderer(color=False, width=80).render(report)
    first = text.splitlines()[1]
    assert first.startswith(f"│ {(report.problems[0].severity.label if report.problems else 'ok').upper()}")
    md = get_renderer("markdown")().render(report)
    assert ("No problems found" in md) == (status == "ok") == ("No problems found" in text)
    junit = ET.fromstring(get_renderer("junit")().render(report))
    assert int(junit.get("failures", "0")) == len({f.code for f in report.problems})
    gh = get_renderer("github")().render(report).splitlines()[0]
    assert f"title=logdoctor%3A {status}::" in gh
    for out in (text, md, gh):
        assert out.count("Batching: ") == 1  # the batching question, said once
