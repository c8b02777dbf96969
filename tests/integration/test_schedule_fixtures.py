"""Generated fixtures (fixtures/gen_schedule.py): lr schedule, step time, eval noise and loss floor."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reports import report_of

DIR = Path(__file__).resolve().parents[2] / "fixtures" / "schedule"
CASES = sorted(p.name.removesuffix(".truth.json") for p in DIR.glob("*.truth.json"))


def test_every_case_is_present() -> None:
    assert set(CASES) >= {"healthy", "lr_jump", "lr_too_high", "slowdown", "loss_floor", "eval_noise"}


@pytest.mark.parametrize("case", CASES)
def test_expected_findings_and_nothing_forbidden(case: str) -> None:
    truth = json.loads((DIR / f"{case}.truth.json").read_text())
    report = report_of(str(DIR / f"{case}.jsonl"))
    by_code = {}
    for f in report.findings:
        by_code.setdefault(f.code, f)
    for code, step in truth["expect"].items():
        assert code in by_code, f"{case}: {code} missing"
        if step is not None:
            assert by_code[code].first_step == step, f"{case}: {code} at {by_code[code].first_step}"
    assert not set(truth["forbid"]) & set(by_code), f"{case}: forbidden {set(truth['forbid']) & set(by_code)}"


def test_the_divergence_names_the_lr_jump_as_its_cause() -> None:
    report = report_of(str(DIR / "lr_jump.jsonl"))
    div = next(f for f in report.findings if f.code == "LD002")
    assert div.message.startswith("The lr jumped from")
    assert "at step 501; the loss diverged 2 steps later" in div.message
    assert div.evidence["lr_cause_step"] == 501 and div.evidence["lr_cause_lag_steps"] == 2


def test_the_generator_is_deterministic(tmp_path: Path) -> None:
    from fixtures import gen_schedule

    gen_schedule.generate(tmp_path)
    for case in CASES:
        assert (tmp_path / "schedule" / f"{case}.jsonl").read_bytes() == (DIR / f"{case}.jsonl").read_bytes()
