"""Declared detector options: type and bounds of each keyword threshold, checked where read."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from logdoctor.errors import ConfigError

Value = float | int | str | bool


@dataclass(frozen=True, slots=True)
class Option:
    """One keyword threshold of a detector's ``__init__``.

    Attributes:
        name: the keyword.
        kind: ``int`` or ``float`` (an int is accepted where a float is asked; bools never are).
        low / high: inclusive bounds, None for unbounded.
        low_open / high_open: make the bound exclusive (``alpha`` in (0, 1)).
    """

    name: str
    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def allowed(self) -> str:
        """What the option takes, in words: ``an integer >= 3``, ``a number in (0, 1)``."""
        what = "an integer" if self.kind is int else "a number"
        if self.low is not None and self.high is not None:
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"{what} in {left}{_num(self.low)}, {_num(self.high)}{right}"
        if self.low is not None:
            return f"{what} {'>' if self.low_open else '>='} {_num(self.low)}"
        if self.high is not None:
            return f"{what} {'<' if self.high_open else '<='} {_num(self.high)}"
        return f"a finite {'integer' if self.kind is int else 'number'}"

    def accepts(self, value: object) -> bool:
        """True when ``value`` has the option's type and lies within its bounds."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.kind is int and not isinstance(value, int):
            return False
        if not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or not (value >= self.high if self.high_open else value > self.high)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def check_options(detector: str, specs: Sequence[Option], values: Mapping[str, object], where: str) -> dict[str, Value]:
    """Validate a detector's configured options against its declared ``specs``.

    Raises:
        ConfigError: one line naming ``where``, ``detector.key`` and what is allowed.
    """
    known = {s.name: s for s in specs}
    out: dict[str, Value] = {}
    for key, value in values.items():
        spec = known.get(key)
        if spec is None:
            raise ConfigError(f"{where}: unknown option {detector}.{key} (known: {', '.join(known) or 'none'})")
        if not spec.accepts(value):
            raise ConfigError(f"{where}: {detector}.{key} must be {spec.allowed()}, got {value!r}")
        out[key] = value  # type: ignore[assignment]
    return out


def int_opt(name: str, low: float | None = None, high: float | None = None) -> Option:
    """An integer option with inclusive bounds."""
    return Option(name, int, low, high)


def positive(name: str) -> Option:
    """A number > 0."""
    return Option(name, float, 0.0, None, low_open=True)


def fraction(name: str, *, high_open: bool = False) -> Option:
    """A number in (0, 1] (or (0, 1) with ``high_open``)."""
    return Option(name, float, 0.0, 1.0, low_open=True, high_open=high_open)


def at_least(name: str, low: float) -> Option:
    """A number >= ``low``."""
    return Option(name, float, low, None)
