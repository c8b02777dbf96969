"""The Python API says what the command line says: the same documents, the same text, the same
one-line errors, and an HTML report that is inert inside a notebook."""

from __future__ import annotations

import io
import json
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

import logdoctor
from logdoctor.cli import main

REPO = Path(__file__).resolve().parents[2]
FIX = REPO / "fixtures"
EXAMPLE = str(FIX / "example.log")
APPENDED = str(FIX / "appended" / "three_runs.log")


def _cli(tmp_path: Path, *args: str) -> str:
    out = tmp_path / "out"
    assert main([*args, "-o", str(out)]) in (0, 1)
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize("log", [EXAMPLE, APPENDED, str(FIX / "sim" / "nan_onset.log")])
def test_a_reports_documents_are_the_commands(tmp_path: Path, log: str) -> None:
    report = logdoctor.analyze(log)
    assert report.to_json() == _cli(tmp_path, "analyze", log, "-f", "json")
    assert report.to_dict() == json.loads(_cli(tmp_path, "analyze", log, "-f", "json"))
    assert report.summary() == _cli(tmp_path, "analyze", log)
    assert report.summary(verbose=1) == _cli(tmp_path, "analyze", log, "-v")
    assert report.to_markdown() == _cli(tmp_path, "analyze", log, "-f", "markdown")
    assert report.to_html() == _cli(tmp_path, "analyze", log, "-f", "html")
    assert str(report) == report.summary()


def test_typed_attributes_are_the_documents_values() -> None:
    report = logdoctor.analyze(APPENDED)
    doc = report.to_dict()
    assert report.status == doc["status"] and report.run_status == doc["run_status"]
    assert report.verdict.batching == doc["verdict"]["batching"]
    assert [f.code for f in report.findings] == [f["code"] for f in doc["findings"]]
    assert report.structure.rows == doc["structure"]["rows"]
    assert [p.status for p in report.runs] == [p["status"] for p in doc["runs"]] and len(report.runs) == 3
    assert report.path == APPENDED and report.table.height == doc["series"]["steps"]
    assert all(f.severity >= logdoctor.Severity.WARNING for f in report.problems)
    assert isinstance(report.verdict, logdoctor.Verdict) and isinstance(report.findings[0], logdoctor.Finding)
    assert report.status in repr(report) and repr(report).startswith("<logdoctor.Report ")


def test_the_figure_is_the_plot_commands_picture(tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    fig = logdoctor.analyze(EXAMPLE).figure()
    assert isinstance(fig, Figure) and len(fig.axes) >= 3
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue().startswith(b"\x89PNG") and len(buf.getvalue()) > 10_000
    assert "example.log" in fig.get_suptitle()


def test_a_list_of_paths_is_the_commands_several_inputs(tmp_path: Path) -> None:
    logs = [str(FIX / "sim" / "shuffled.log"), str(FIX / "sim" / "static.log"), str(tmp_path / "missing.log")]
    reports = logdoctor.analyze(logs)
    assert isinstance(reports, logdoctor.Reports) and len(reports) == 2
    assert [r.path for r in reports] == logs[:2] and reports[1].verdict.batching == "static"
    assert reports.errors == {logs[2]: f"{logs[2]}: no such file or directory"}
    assert reports.status == "error"
    out = tmp_path / "out.json"
    assert main(["analyze", *logs, "-f", "json", "-o", str(out)]) == 2
    assert reports.to_json() == out.read_text(encoding="utf-8")
    assert main(["analyze", *logs, "-o", str(out)]) == 2
    assert reports.summary() == out.read_text(encoding="utf-8")
    with pytest.raises(logdoctor.ConfigError, match="a plot shows one run, got 2"):
        reports.figure()


def test_a_folder_is_one_run_or_a_list() -> None:
    with pytest.raises(logdoctor.InputError, match=r"names \d+ runs; analyze\(\[") as err:
        logdoctor.analyze(str(FIX / "sim"))
    assert "\n" not in str(err.value)
    assert len(logdoctor.analyze([FIX / "sim"])) > 10  # a PathLike in a list, as the command reads a folder


def test_every_input_failing_is_an_error() -> None:
    with pytest.raises(logdoctor.InputError, match=r"nope\.log: no such file or directory \(and 1 more"):
        logdoctor.analyze(["nope.log", "nope2.log"])


def test_compare_is_the_compare_command(tmp_path: Path) -> None:
    base, cand = str(FIX / "compare_static.log"), str(FIX / "compare_bucketed.jsonl")
    c = logdoctor.compare(base, cand)
    assert isinstance(c, logdoctor.Comparison) and c.outcomes == ("worked",) and not c.regressed
    assert c.to_json() == _cli(tmp_path, "compare", base, cand, "-f", "json")
    assert c.summary() == _cli(tmp_path, "compare", base, cand)
    assert c.to_markdown() == _cli(tmp_path, "compare", base, cand, "-f", "markdown")
    assert c.to_html() == _cli(tmp_path, "compare", base, cand, "-f", "html")
    assert c.baseline.verdict.batching == "static" and c.candidates[0].path == cand
    assert logdoctor.compare(logdoctor.analyze(base), cand).to_json() == c.to_json()  # a Report is a run too
    fig = c.figure()
    assert len(fig.axes) == 3
    _inert(c._repr_html_())


def _curve(scale: float) -> pl.DataFrame:
    return pl.DataFrame({"step": range(1, 401), "loss": [scale * (2.0 + 1 / (1 + i / 50)) for i in range(400)]})


def test_compare_refuses_unrelated_runs_unless_forced() -> None:
    with pytest.raises(logdoctor.InputError, match=r"baseline \(baseline\) and candidate: not comparable: the loss"):
        logdoctor.compare(_curve(1.0), _curve(10.0))
    forced = logdoctor.compare(_curve(1.0), _curve(10.0), _curve(1.0), force=True)
    assert [r.path for r in forced.candidates] == ["candidate", "candidate 2"] and forced.baseline.path == "baseline"
    with pytest.raises(logdoctor.InputError, match="compare takes one run per argument"):
        logdoctor.compare(_curve(1.0), [EXAMPLE, EXAMPLE])


def _stderr_line(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(args) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("logdoctor: error: ") and "\n" not in line
    return line.removeprefix("logdoctor: error: ")


@pytest.mark.parametrize(
    ("options", "args"),
    [
        ({"select": "LD999"}, ["--select", "LD999"]),
        ({"ignore": ["LD1", "nosuch-rule"]}, ["--ignore", "LD1", "--ignore", "nosuch-rule"]),
        ({"field_map": {"los": "x"}}, ["--map", "los=x"]),
        ({"field_map": ["loss"]}, ["--map", "loss"]),
        ({"field_map": {"loss": "objective"}}, ["--map", "loss=objective"]),
        ({"stride": 0}, ["--stride", "0"]),
        ({"max_memory": "lots"}, ["--max-memory", "lots"]),
        ({"config": "nope.toml"}, ["--config", "nope.toml"]),
    ],
)
def test_a_wrong_option_is_the_commands_one_line_error(
    capsys: pytest.CaptureFixture[str], options: dict[str, object], args: list[str]
) -> None:
    expected = _stderr_line(capsys, ["analyze", EXAMPLE, *args])
    with pytest.raises(logdoctor.ConfigError) as err:
        logdoctor.analyze(EXAMPLE, **options)  # type: ignore[call-overload]
    assert str(err.value) == expected


@pytest.mark.parametrize(
    "bad",
    [
        {"selct": "LD1"},
        {"steps_per_epoch": 0},
        {"steps_per_epoch": "12"},
        {"select": 5},
        {"jobs": 0},
    ],
)
def test_options_the_command_line_cannot_misspell_are_config_errors(bad: dict[str, object]) -> None:
    with pytest.raises(logdoctor.ConfigError) as err:
        logdoctor.analyze([EXAMPLE] if "jobs" in bad else EXAMPLE, **bad)  # type: ignore[call-overload]
    assert "\n" not in str(err.value) and next(iter(bad)).split("_")[0] in str(err.value).replace("-", "_")


def test_options_take_effect_as_on_the_command_line(tmp_path: Path) -> None:
    ignored = logdoctor.analyze(EXAMPLE, ignore="LD5")
    assert ignored.to_json() == _cli(tmp_path, "analyze", EXAMPLE, "--ignore", "LD5", "-f", "json")
    spe = logdoctor.analyze(EXAMPLE, steps_per_epoch=100, select=["LD2", "LD5"])
    assert spe.to_json() == _cli(
        tmp_path, "analyze", EXAMPLE, "--steps-per-epoch", "100", "--select", "LD2,LD5", "-f", "json"
    )
    renamed = pl.DataFrame({"iteration": range(1, 301), "objective": [3.0 - i / 200 for i in range(300)]})
    assert logdoctor.analyze(renamed, field_map={"loss": "objective"}).table.height == 300


def test_a_config_file_is_found_as_the_command_finds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "logdoctor.toml").write_text('ignore = ["LD5"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert not any(f.code.startswith("LD5") for f in logdoctor.analyze(EXAMPLE).findings)
    assert any(f.code.startswith("LD5") for f in logdoctor.analyze(EXAMPLE, ignore="LD1").findings)  # replaces it


@pytest.mark.parametrize(
    ("source", "error", "message"),
    [
        (42, logdoctor.InputError, "expected a path, a list of paths, a polars or pandas DataFrame"),
        ([], logdoctor.InputError, "got an empty list"),
        ([{"loss": 1.0}, "x.log"], logdoctor.InputError, "got list"),
        ({"loss": [1.0]}, logdoctor.InputError, "got dict"),
        ("missing.log", logdoctor.InputError, "missing.log: no such file or directory"),
        (pl.DataFrame(), logdoctor.InputError, "DataFrame: the DataFrame is empty"),
        (
            pl.DataFrame({"a": [1, 2]}),
            logdoctor.ParseError,
            r"DataFrame: no record holds a training loss \(keys seen: a\)",
        ),
        ([{"step": 1}, {"step": 2}], logdoctor.ParseError, r"records: no record holds a training loss"),
        ({"log_history": []}, logdoctor.ParseError, "trainer_state: log_history is empty"),
    ],
)
def test_bad_input_is_a_logdoctor_error(source: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message) as err:
        logdoctor.analyze(source)
    assert "\n" not in str(err.value)


def test_a_name_is_for_records_in_memory() -> None:
    with pytest.raises(logdoctor.ConfigError, match="name: names records in memory"):
        logdoctor.analyze(EXAMPLE, name="x")
    frame = pl.DataFrame({"step": range(1, 201), "loss": [2.0 - i / 400 for i in range(200)]})
    assert logdoctor.analyze(frame, name="my run").path == "my run"
    assert logdoctor.analyze(frame).path == "DataFrame"


# --- the HTML a notebook shows -------------------------------------------------------------------------
#: what the report's HTML may hold: its own page, layout, tables and inline SVG; nothing that runs or fetches
TAGS = {
    "html",
    "head",
    "meta",
    "body",
    "div",
    "style",
    "h1",
    "h2",
    "p",
    "b",
    "i",
    "ul",
    "li",
    "table",
    "tr",
    "th",
    "td",
    "br",
    "svg",
    "g",
    "rect",
    "line",
    "polyline",
    "path",
    "text",
    "circle",
    "title",
    "tspan",
}


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self.values: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs |= {k for k, _ in attrs}
        self.values += [v or "" for _, v in attrs]


def _inert(html: str) -> _Markup:
    markup = _Markup()
    markup.feed(html)
    assert markup.tags <= TAGS, markup.tags - TAGS
    assert not any(a.startswith("on") or a in ("href", "src", "xlink:href", "srcdoc") for a in markup.attrs)
    assert not any("url(" in v or "javascript:" in v for v in markup.values)
    assert "@import" not in html and "http://" not in html and "https://" not in html
    return markup


def test_the_notebook_html_is_the_report_scoped_and_inert() -> None:
    report = logdoctor.analyze(EXAMPLE)
    fragment = report._repr_html_()
    page = report.to_html()
    body = page.split("<body>", 1)[1].rsplit("</body>", 1)[0].strip()
    assert body in fragment  # the same report
    assert "<html" not in fragment and "<body" not in fragment
    css = fragment.split("<style>", 1)[1].split("</style>", 1)[0]
    assert all(rule.startswith(".logdoctor-report") for rule in css.splitlines() if rule.strip())
    _inert(fragment)


HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>"><svg onload=alert(3)>'


def test_metric_names_and_names_cannot_inject_markup() -> None:
    n = 400
    frame = pl.DataFrame(
        {
            "step": range(1, n + 1),
            "loss": [2.0 + (5.0 if i == 200 else 0.0) - i / 400 for i in range(n)],
            f"eval_{HOSTILE}": [1.5 if i % 50 == 0 else None for i in range(n)],
            HOSTILE: [float(i % 7) for i in range(n)],
        }
    )
    report = logdoctor.analyze(frame, name=HOSTILE)
    for html in (report._repr_html_(), report.to_html()):
        markup = _inert(html)
        assert "script" not in markup.tags and "img" not in markup.tags
        assert "&lt;script&gt;" in html  # shown, as text


def test_a_config_file_passed_over_is_a_warning_at_the_callers_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("not [valid toml\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning, match=r"logdoctor: ignoring .*pyproject.toml: invalid TOML") as caught:
        logdoctor.analyze(EXAMPLE)
    assert caught[0].filename == __file__
