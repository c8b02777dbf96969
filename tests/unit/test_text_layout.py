"""The text report at 80 columns: health box of one line per problem, each message once, truncation
said, plain words first, the batch-statistics hint only where it decides something."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from logdoctor import codes, pipeline
from logdoctor.model import Finding, Report, Severity
from tests.reportfactory import REPORTS
from tests.textlayout import layout_problems, render_text, statistics_in, statistics_kept

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _with(report: Report, findings: list[Finding]) -> Report:
    return dataclasses.replace(report, findings=tuple(sorted(findings, key=lambda f: -f.severity)))


def _box(text: str) -> list[str]:
    lines = text.split("\n")
    end = next(i for i, x in enumerate(lines) if x.startswith("╰"))
    return [x.strip("│ ") for x in lines[1:end]]


@pytest.mark.parametrize(
    "name",
    [
        "example.log",
        "sim/shuffled.log",
        "sim/sorted_asc.log",
        "sim/static.log",
        "sim/nan_onset.log",
        "sim/cyclic_lr.log",
        "realruns/pathology_lr_jump.log",
    ],
)
@pytest.mark.parametrize("verbosity", [0, 1])
def test_fixture_reports_fit_80_columns(name: str, verbosity: int) -> None:
    report = pipeline.analyze(pipeline.load(str(FIXTURES / name)))
    assert layout_problems(render_text(report, verbosity), report) == []


@pytest.mark.parametrize("kind", sorted(REPORTS))
def test_hand_built_reports_fit_80_columns(kind: str) -> None:
    report = REPORTS[kind]()
    for verbosity in (0, 1):
        assert layout_problems(render_text(report, verbosity), report) == []
    assert statistics_in(render_text(report)) == []  # plain words first
    assert statistics_kept(report) == []  # the statistics under -v and in JSON


def test_box_has_one_line_per_problem_then_more() -> None:
    base = REPORTS["sorted"]()
    long = "words far longer than one line of the box, " * 4
    found = [
        codes.finding(c, f"Problem {i}: {long}", first_step=10 * i + 1, last_step=10 * i + 5)
        for i, c in enumerate(("LD002", "LD101", "LD403", "LD401", "LD410"))
    ]
    found.append(codes.finding("LD101", f"Problem 5: {long}", first_step=90, last_step=95))
    text = render_text(_with(base, found))
    box = _box(text)
    assert box[0] == "ERROR    LD002 divergence, steps 1-5"
    assert box[1] == "WARNING  LD101 loss-spike x2, steps 11-95"
    assert box[3] == "+ 2 more problems: see Findings"
    assert box[4].startswith("Batching:")
    assert all("words far" not in x for x in box)
    assert all(text.count(f"Problem {i}:") == 1 for i in range(6))  # each message once, in the list


def test_finding_header_then_message_at_full_width() -> None:
    text = render_text(REPORTS["sorted"]())
    lines = text.split("\n")
    i = lines.index("warning  LD101 loss-spike  step 412")
    assert lines[i + 1] == "  Loss spike at step 412: 4.93, 2.05x the local median of 2.41."


def _spikes(n: int, total: int) -> list[Finding]:
    return [
        codes.finding(
            "LD101",
            f"Loss spike at step {100 * i + 7}: 9.1, 2.3x the local median of 4.",
            first_step=100 * i + 7,
            evidence={"robust_z": 40.0 - i, "n_spikes": total, "null_p_value": 1e-6},
        )
        for i in range(n)
    ]


def test_truncation_is_said() -> None:
    report = _with(REPORTS["healthy"](), _spikes(10, 35))
    text = render_text(report)
    assert text.count("Loss spike at step") == 3
    assert "3 of 35 loss-spike events shown (largest first); -v lists the 10 reported;" in " ".join(text.split())
    verbose = " ".join(render_text(report, 1).split())
    assert verbose.count("Loss spike at step") == 10
    assert "10 of 35 loss-spike events shown (largest first); spikes.max_findings" in verbose
    assert layout_problems(render_text(report), report) == []


def test_truncation_without_a_detector_cap() -> None:
    report = _with(REPORTS["healthy"](), _spikes(5, 5))
    text = " ".join(render_text(report).split())
    assert "(3 of 5 loss-spike findings shown; -v lists all 5)" in text
    assert "max_findings" not in text


def test_plain_words_first_statistics_under_v() -> None:
    report = _with(REPORTS["healthy"](), _spikes(1, 1))
    assert "robust" not in render_text(report) and "p = " not in render_text(report)
    verbose = render_text(report, 1)
    assert "40 robust SDs (MAD) above the local median" in verbose and "null p value" in verbose


def test_every_finding_explained_leaves_no_empty_list() -> None:
    base = REPORTS["sorted"]()
    hidden = [
        dataclasses.replace(f, evidence={**f.evidence, "explained_by": "sorted-batching"})
        for f in base.findings
        if f.code != "LD501"
    ]
    only = [f for f in base.findings if f.code == "LD501"]
    text = render_text(_with(base, [*hidden, *only]))
    assert "symptoms of sorted-batching" in text
    assert layout_problems(text, base) == []
    text = render_text(_with(base, hidden))
    assert "Findings" not in text.split("\n") and "+ 2 more: symptoms of sorted-batching" in text


@pytest.mark.parametrize("kind", ["empty", "inconclusive", "one_step"])
def test_no_batch_statistics_hint_where_it_decides_nothing(kind: str) -> None:
    text = render_text(REPORTS[kind]())
    assert "logdoctor.emit" not in text
    assert "Batching: not decidable from this log" in _box(text)[-1] or "What to do" in text


def test_batch_statistics_hint_once_at_the_end_for_a_periodic_loss() -> None:
    base = REPORTS["empty"]()
    periodic = codes.finding(
        "LD201", "The detrended loss repeats every ~46.5 steps.", first_step=1, last_step=50, severity=Severity.WARNING
    )
    text = render_text(_with(base, [periodic]))
    assert text.count("logdoctor.emit") == 1
    tail = " ".join(text.split("hint:", 1)[1].split())
    assert tail.startswith("To tell whether batching causes the periodic loss: log seqs, tokens")
    assert "logdoctor.emit" not in "".join(_box(text))
