"""A loss that never moves: one value in every row (LD402 at warning); at ln k or ln |V|, the uniform output (LD421).

A run learns only if its loss changes. A loss whose every row holds one value (to ``max_range`` of
its level) over at least ``min_rows`` rows says, in a handful of rows, that nothing is learned: a
zero or frozen lr, parameters that receive no gradient, or a loss that is not recomputed. When that
value is ln k for the k classes the run states, or ln |V| for the vocabulary it states, the model's
output is uniform over them, and the finding says so (LD421, loss at chance). A loss of exactly 0
is LD025's (zeroloss.py).

Null: the 734 healthy real logs and prefixes of tests/answers.tsv (whole runs and their first 8, 10,
15, 20 and 30 rows; ../shared/reallogs, the public and blind dev logs, fixtures other than sim and
inject): the smallest relative range of the loss among them is 1.05% (8 rows of a Sockeye run),
ten times ``max_range``.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors import robust
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.model import LOSS, ConfigFact, Run, Severity
from logdoctor.options import Option, fraction, int_opt

#: The relative range (max - min over the level) within which a loss is one value: a tenth of the null's smallest.
MAX_RANGE = 1e-3
#: A constant within this share of ln k (or ln |V|) is the uniform output over k (|V|).
UNIFORM_TOLERANCE = 0.01


def constant_level(values: np.ndarray, max_range: float) -> float | None:
    """The loss's level when every finite value is within ``max_range`` of it (relative range), else None."""
    v = values[np.isfinite(values)]
    if v.size == 0:
        return None
    level = float(np.median(v))
    if level == 0 or (float(v.max()) - float(v.min())) > max_range * abs(level):
        return None
    return level


def _whole(fact: ConfigFact) -> int | None:
    v = fact.value
    return int(v) if not isinstance(v, str | bool) and v == int(v) and v >= 2 else None


def uniform_over(run: Run, level: float) -> tuple[int, str, ConfigFact] | None:
    """(k, what, the fact) when ``level`` is ln k of the classes or the vocabulary the run states."""
    for fact in run.meta.config_facts:
        k = _whole(fact) if fact.name in ("classes", "vocab") else None
        if k is not None and abs(level / math.log(k) - 1) <= UNIFORM_TOLERANCE:
            return k, "classes" if fact.name == "classes" else "tokens of the vocabulary", fact
    return None


class ConstantLossDetector(Analyzer):
    """The loss holds one value in every row (within ``max_range`` of it) over at least ``min_rows`` rows."""

    name = "constant-loss"
    options: ClassVar[tuple[Option, ...]] = (int_opt("min_rows", 3), fraction("max_range"))

    def __init__(self, *, min_rows: int = 8, max_range: float = MAX_RANGE) -> None:
        self.min_rows = min_rows
        self.max_range = max_range

    def analyze(self, run: Run) -> Detection:
        """At most one finding, over the whole run."""
        s = robust.series(run, LOSS)
        if s.n < self.min_rows:
            return Detection()
        level = constant_level(s.values, self.max_range)
        if level is None:
            return Detection()
        spread = float(np.ptp(s.values))
        ev: dict[str, float | int | str] = {
            "level": round(level, 6),
            "range": round(spread, 6),
            "rows": s.n,
            "max_range": self.max_range,
            "constant": 1,
        }
        where = dict(first_step=int(s.steps[0]), last_step=int(s.steps[-1]))
        said = f"The loss is {level:.6g} in every one of its {s.n} rows (range {spread:.3g})"
        uniform = uniform_over(run, level)
        if uniform is not None:
            k, what, fact = uniform
            ev |= {"uniform_over": k, "uniform_loss": round(math.log(k), 6), "stated": fact.source}
            return Detection(
                (
                    codes.finding(
                        "LD421",
                        f"{said}: ln {k} = {math.log(k):.4f}, the loss of a uniform output over the {k:,} {what} "
                        f"({fact.source}): the model outputs nothing learned and its loss never moves.",
                        confidence=0.9,
                        evidence=ev,
                        **where,
                    ),
                )
            )
        return Detection(
            (
                codes.finding(
                    "LD402",
                    f"{said}: the loss never moves, so nothing is learned (a zero or frozen lr, parameters that get "
                    "no gradient, or a loss that is not recomputed each step).",
                    severity=Severity.WARNING,
                    confidence=0.9,
                    evidence=ev,
                    **where,
                ),
            )
        )
