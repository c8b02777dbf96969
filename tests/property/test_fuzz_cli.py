"""A short seeded fuzz run of every command and report format on valid-but-hostile inputs (the long
run: ``python bench/fuzz.py --cli 2000``); the contract is fuzzcli's."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.property.fuzzcli import Case, cases, run_case


@settings(max_examples=12, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=cases())
def test_every_command_and_format_keeps_its_contract(case: Case) -> None:
    run_case(case)
