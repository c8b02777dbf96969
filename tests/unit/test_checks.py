"""The checks a report lists (issue 42.4): made of the detectors' own run/skip decisions, in
text, JSON and HTML alike, each skip with its reason, and a skipped check never finds anything."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.config import AnalysisConfig
from logdoctor.detectors import ANALYZERS
from logdoctor.detectors.base import NO_BATCH_STATS, NO_EVAL, NO_LR, TOO_FEW_ROWS
from logdoctor.model import Report
from logdoctor.options import check_options
from logdoctor.renderers import get_renderer
from logdoctor.renderers.checks import checks_phrase

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LOGS = [
    "example.log",
    "spiky.log",
    "formats/hf_trainer_state.json",
    "formats/megatron.log",
    "formats/csv_lightning_metrics.csv",
    "formats/mlflow_run",
    "formats/fairseq.log",
]


def _records(n: int, *, lr: bool = True, evals: bool = False, lengths: bool = False) -> Report:
    rows = []
    for s in range(1, n + 1):
        row: dict[str, float] = {"step": s, "loss": 3.0 * math.exp(-s / 200) + 0.5 + 0.01 * math.sin(s)}
        if lr:
            row["lr"] = 1e-3 * min(1.0, s / 20)
        if lengths:
            row["len_mean"] = 100.0 + (s * 37) % 400
        rows.append(row)
        if evals and s % 50 == 0:
            rows.append({"step": s, "eval_loss": 2.0 * math.exp(-s / 300) + 0.6})
    return pipeline.analyze(pipeline.load_records(rows, "run.jsonl"))


@pytest.mark.parametrize("name", LOGS)
def test_the_list_is_what_each_detector_decided_and_a_skipped_one_found_nothing(name: str) -> None:
    run = pipeline.load(str(FIXTURES / name))
    report = pipeline.analyze(run)
    cfg = AnalysisConfig()
    assert [c.name for c in report.checks] == [cls.name for cls in ANALYZERS] + ["batching"]
    for cls, check in zip(ANALYZERS, report.checks, strict=False):
        detection = cls(**check_options(cls.name, cls.options, cfg.options_for(cls.name), "x")).analyze(run)
        assert check.skipped == detection.skipped, cls.name
        if not check.ran:
            assert detection.findings == (), cls.name  # it did not run: it can have found nothing
    if not run.has_length_stats:  # the batch order cannot be read without batch statistics
        assert not report.checks[-1].ran


def test_reasons_follow_the_data() -> None:
    short = {c.name: c.skipped for c in _records(6).checks}
    assert short["periodicity"] == short["spikes"] == short["changepoints"] == TOO_FEW_ROWS
    assert short["nonfinite"] == "" and short["integrity"] == ""
    bare = {c.name: c.skipped for c in _records(400, lr=False).checks}
    assert bare["lr-schedule"] == NO_LR and bare["overfitting"] == bare["eval-noise"] == NO_EVAL
    assert bare["periodicity"] == "" and bare["batching"] == NO_BATCH_STATS
    full = {c.name: c.skipped for c in _records(400, evals=True, lengths=True).checks}
    assert full["lr-schedule"] == full["overfitting"] == full["eval-noise"] == full["batching"] == ""


def test_text_json_and_html_say_the_same_checks() -> None:
    report = _records(400, lr=False)
    text = get_renderer("text")(color=False, width=80).render(report)
    block = text[text.index("checks  ") : text.index("\nlog ")]
    ran = sum(c.ran for c in report.checks)
    flat = " ".join(block.split())
    assert flat == "checks " + checks_phrase(report.checks)
    assert f"{ran} of {len(report.checks)} ran" in flat and "no lr" in flat and "no eval metric (5)" in flat
    assert all(len(line) <= 80 for line in text.splitlines())
    doc = json.loads(get_renderer("json")(color=False).render(report))
    assert [(c["name"], c["ran"], c["skipped"]) for c in doc["checks"]] == [
        (c.name, c.ran, c.skipped or None) for c in report.checks
    ]
    html = get_renderer("html")(color=False).render(report)
    for c in report.checks:
        assert f"<td>{c.name}</td><td>{'ran' if c.ran else 'not run: ' + c.skipped}</td>" in html


def test_every_check_ran_says_so_briefly() -> None:
    from logdoctor.model import Check

    assert checks_phrase([Check("a"), Check("b")]) == "all 2 ran"
    assert checks_phrase([Check("a"), Check("b", NO_LR), Check("c", NO_EVAL), Check("d", NO_EVAL)]) == (
        "1 of 4 ran; not: no lr, no eval metric (2)"
    )
