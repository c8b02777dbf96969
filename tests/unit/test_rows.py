"""The shared rows: evidence in words, verdict line, facts and the sparkline."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl

from logdoctor import codes
from logdoctor.model import validate_run
from logdoctor.renderers.evidence import evidence_sentences, format_p, format_value
from logdoctor.renderers.rows import (
    build_rows,
    count_phrase,
    sparkline,
    step_range,
    summary_rows,
    where,
)
from tests.reportfactory import REPORTS


def test_known_evidence_keys_read_as_sentences() -> None:
    ev = {"loss_length_rho": 0.8234, "loss_length_p": 3e-14, "recurrence_fraction": 0.92}
    assert evidence_sentences(ev) == [
        "loss vs batch length: Spearman ρ = 0.82, p < 1e-9",
        "92% of batches were already seen in an earlier epoch",
    ]


def test_unknown_keys_fall_back_to_generic_words() -> None:
    assert evidence_sentences({"weird_ratio": 1.23456, "n_windows": 12, "flag": True, "gone": None}) == [
        "weird ratio: 1.23",
        "n windows: 12",
        "flag: true",
    ]  # None says nothing


def test_partial_template_uses_the_shorter_one() -> None:
    assert evidence_sentences({"period": 150, "steps_per_epoch": 150}) == [
        "loss period 150 steps, epoch length 150 steps"
    ]


def test_value_formats() -> None:
    assert format_p(0.00312) == "p = 0.0031"
    assert format_p(0.0) == "p < 1e-9"
    assert format_value(float("nan")) == "NaN"
    assert format_value(12345) == "12,345"
    assert format_value(0.25, "pct") == "25%"


def test_step_range_and_where() -> None:
    f = codes.finding("LD101", "m", first_step=5, last_step=5)
    assert (step_range(f), where(f)) == ("5", "step 5")
    g = dataclasses.replace(f, last_step=9)
    assert (step_range(g), where(g)) == ("5-9", "steps 5-9")
    h = codes.finding("LD504", "m")
    assert (step_range(h), where(h)) == ("run", "whole run")


def test_count_phrase() -> None:
    assert count_phrase(REPORTS["not_batching"]().findings) == "4 findings (3 warnings, 1 info)"
    assert count_phrase(()) == "no findings"


def test_rows_sort_findings_by_severity_and_hide_bookkeeping_columns() -> None:
    rows = build_rows(REPORTS["inconclusive"]())
    assert [f.code for f in rows.findings] == ["LD001", "LD504", "LD003"]
    facts = dict(rows.facts)
    assert facts["columns"] == "loss"
    assert facts["resumes"] == "1 (at step 251)"
    assert facts["NaN/inf loss"] == "3 steps"


def test_sparkline_downsamples_and_marks_nan() -> None:
    report = REPORTS["inconclusive"]()
    line = sparkline(report, width=40)
    assert len(line) == 40 and line[0] == "█" and line[-1] == "▁"
    table = pl.DataFrame({"step": [1, 2, 3], "loss": [1.0, float("nan"), 3.0], "line_no": [1, 2, 3]})
    run = dataclasses.replace(report.run, table=validate_run(table))
    assert sparkline(dataclasses.replace(report, run=run), width=10) == "▁·█"


def test_sparkline_constant_and_one_step() -> None:
    assert sparkline(REPORTS["one_step"](), width=10) == "▁"
    assert set(sparkline(REPORTS["empty"](), width=5)) <= set("▁▂▃▄▅▆▇█")
    assert np.isfinite(REPORTS["empty"]().run.table["loss"].to_numpy()).all()


def test_summary_rows_values() -> None:
    from logdoctor.model import Outcome

    rows = summary_rows([Outcome("x.log", REPORTS["empty"](), exit_code=0), Outcome("y.log", None, "boom", 2)])
    assert rows == [
        ("x.log", "50", REPORTS["empty"]().status, "none", "undecided"),
        ("y.log", "-", "unreadable", "boom", "-"),
    ]


def test_shorten_middle_keeps_both_ends() -> None:
    from logdoctor.renderers.rows import shorten_middle

    path = "/work/shared/reallogs/hf_trl_sft_trainer_state_tinyllama_num_tokens.json"
    short = shorten_middle(path, 40)
    assert len(short) == 40 and short.startswith("/work/") and short.endswith("num_tokens.json")
    assert shorten_middle("a.log", 40) == "a.log"
