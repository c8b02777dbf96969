"""Every detector declares each keyword threshold with a type and bounds, and the checks hold them."""

from __future__ import annotations

import inspect

import pytest

from logdoctor.configfile import detectors
from logdoctor.errors import ConfigError
from logdoctor.options import Option, check_options


@pytest.mark.parametrize("name", sorted(detectors()))
def test_every_keyword_is_declared_and_its_default_is_allowed(name: str) -> None:
    cls = detectors()[name]
    params = {k: p.default for k, p in inspect.signature(cls).parameters.items() if p.kind is p.KEYWORD_ONLY}
    declared = {o.name: o for o in cls.options}
    assert set(declared) == set(params), f"{name}: declared {sorted(declared)}, __init__ {sorted(params)}"
    for key, default in params.items():
        assert declared[key].accepts(default), f"{name}.{key} default {default!r} outside its bounds"
        assert isinstance(default, declared[key].kind), f"{name}.{key}: default type"


@pytest.mark.parametrize(
    ("option", "good", "bad", "words"),
    [
        (Option("w", int, 3), [3, 31], [2, -5, 3.0, True, "3", None], "an integer >= 3"),
        (Option("z", float, 0, None, low_open=True), [1e-9, 8, 8.5], [0, -1, "8", float("inf")], "a number > 0"),
        (Option("a", float, 0, 1, True, True), [0.5], [0, 1, 1.5, float("nan")], "a number in (0, 1)"),
        (Option("r", float, -1, 1), [-1, 0, 1], [-1.01, 1.01, False], "a number in [-1, 1]"),
        (Option("f", float), [-1e300, 0], [float("-inf"), "x"], "a finite number"),
    ],
)
def test_option_bounds(option: Option, good: list[object], bad: list[object], words: str) -> None:
    assert all(option.accepts(v) for v in good)
    assert not any(option.accepts(v) for v in bad)
    assert option.allowed() == words


def test_check_options_names_where_key_and_what_is_allowed() -> None:
    specs = (Option("window", int, 3),)
    assert check_options("spikes", specs, {"window": 5}, "f.toml") == {"window": 5}
    with pytest.raises(ConfigError, match=r"^f\.toml: spikes\.window must be an integer >= 3, got -5$"):
        check_options("spikes", specs, {"window": -5}, "f.toml")
    with pytest.raises(ConfigError, match=r"^f\.toml: unknown option spikes\.win \(known: window\)$"):
        check_options("spikes", specs, {"win": 5}, "f.toml")
