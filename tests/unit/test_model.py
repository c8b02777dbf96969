"""Unit tests for the data contracts in logdoctor.model and logdoctor.codes."""

from __future__ import annotations

import polars as pl
import pytest

from logdoctor import codes
from logdoctor.errors import ParseError
from logdoctor.model import Finding, Severity, Verdict, validate_run


def test_severity_orders_and_parses() -> None:
    assert Severity.ERROR > Severity.WARNING > Severity.INFO
    assert Severity.parse(" Warning ") is Severity.WARNING
    with pytest.raises(ValueError):
        Severity.parse("fatal")


@pytest.mark.parametrize("code", ["LD1", "XX101", "LD10a", "LD1011"])
def test_finding_rejects_bad_codes(code: str) -> None:
    with pytest.raises(ValueError):
        Finding(code=code, rule="x", severity=Severity.INFO, message="m")


def test_finding_rejects_confidence_outside_unit_interval() -> None:
    with pytest.raises(ValueError):
        Finding(code="LD101", rule="x", severity=Severity.INFO, message="m", confidence=1.5)


def test_verdict_rejects_unknown_label() -> None:
    with pytest.raises(ValueError):
        Verdict("shuffled", 0.5, "c", "s")  # type: ignore[arg-type]


def test_codes_registry_is_consistent() -> None:
    names = [r.name for r in codes.RULES.values()]
    assert len(names) == len(set(names)), "rule names must be unique"
    for code, rule in codes.RULES.items():
        assert code == rule.code and rule.meaning and rule.action
    f = codes.finding("LD101", "spike", first_step=3, last_step=3)
    assert f.rule == "loss-spike" and f.severity is Severity.WARNING and f.hint


def test_select_and_ignore_by_code_prefix_and_name() -> None:
    fs = [codes.finding(c, "m") for c in ("LD001", "LD101", "LD201", "LD501")]
    assert [f.code for f in codes.select(fs, select=["LD1", "sorted-batching"])] == ["LD101", "LD501"]
    assert [f.code for f in codes.select(fs, ignore=["LD0", "periodic-loss"])] == ["LD101", "LD501"]


def test_validate_run_casts_and_orders_columns() -> None:
    t = pl.DataFrame({"zeta": [1, 2], "loss": [1, 2], "step": [1.0, 2.0], "line_no": [5, 6], "acc": ["0.1", "x"]})
    out = validate_run(t)
    assert out.columns == ["step", "loss", "line_no", "acc", "zeta"]
    assert out.schema["step"] == pl.Int64 and out.schema["zeta"] == pl.Float64
    assert out["acc"].to_list() == [0.1, None]


@pytest.mark.parametrize(
    "table",
    [
        pl.DataFrame({"step": [1], "line_no": [1]}),
        pl.DataFrame({"step": [], "loss": [], "line_no": []}),
        pl.DataFrame({"step": [1, 1], "loss": [1.0, 2.0], "line_no": [1, 2]}),
        pl.DataFrame({"step": [2, 1], "loss": [1.0, 2.0], "line_no": [1, 2]}),
    ],
)
def test_validate_run_rejects_broken_tables(table: pl.DataFrame) -> None:
    with pytest.raises(ParseError):
        validate_run(table)


def test_errors_are_one_bounded_line() -> None:
    from logdoctor.errors import ParseError

    err = ParseError('bad csv (could not parse `"1.5,,\n3,1159,,1.5\n` here)' + "x" * 1000)
    assert "\n" not in str(err) and len(str(err)) <= 400
    assert str(err).startswith('bad csv (could not parse `"1.5,, 3,1159,,1.5 ` here)')
