"""A loss that never moves: one value in every row (LD402 at warning); at ln k or ln |V|, the uniform output (LD421).

A run learns only if its loss changes. A loss whose every row holds one value (to ``max_range`` of
its level) over at least ``min_rows`` rows says, in a handful of rows, that nothing is learned: a
zero or frozen lr, parameters that receive no gradient, or a loss that is not recomputed. When that
value is ln k for the k classes the run states, or ln |V| for the vocabulary it states, the model's
output is uniform over them, and the finding says so (LD421, loss at chance). A loss of exactly 0
is LD025's (zeroloss.py).

An evaluation loss says it too: one value (to ``max_range``) at ``min_rows`` or more evaluations, each
a new evaluation (its value differs from the one before: a value carried onto every line, NeMo's
val_loss repeated between its evaluations, is one evaluation), is a model whose held-out predictions
never change (LD402 for that loss). Null: the eval losses of the real logs whose truth is healthy
(../shared/reallogs, the public logs, the blind corpus's dev split; 203 series of 5 or more
evaluations): the smallest whole-run relative range with changing values is 5.7% (a LLaMA-Factory
eval_loss over 13 evaluations), fifty times ``max_range``.

Null: the 734 healthy real logs and prefixes of tests/answers.tsv (whole runs and their first 8, 10,
15, 20 and 30 rows; ../shared/reallogs, the public and blind dev logs, fixtures other than sim and
inject): the smallest relative range of the loss among them is 1.05% (8 rows of a Sockeye run),
ten times ``max_range``.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from logdoctor import codes, vocab
from logdoctor.detectors import robust
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.detectors.evalseries import eval_series
from logdoctor.detectors.nonfinite import other_objectives
from logdoctor.model import EPOCH, LINE_NO, LOSS, STEP, ConfigFact, Finding, Run, Severity
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


def printed_quantum(value: float) -> float:
    """The last printed digit's unit of ``value`` as the log wrote it (21.83414 -> 1e-5, 0.0012 -> 1e-4)."""
    text = repr(float(value))
    if "e" in text or "E" in text:
        mant, exp = text.lower().split("e")
        decimals = len(mant.split(".")[1].rstrip("0")) if "." in mant else 0
        return 10.0 ** (int(exp) - decimals)
    frac = text.split(".")[1].rstrip("0") if "." in text else ""
    return 10.0 ** -len(frac)


def frozen_tail(values: np.ndarray, min_rows: int, max_quantum: float) -> int | None:
    """The first row of the stretch at the end of ``values`` (finite, in row order) that repeats the
    last value exactly, when it spans at least ``min_rows`` rows and the value carries enough digits
    that repeating it is no rounding (its printed unit within ``max_quantum`` of it); else None.

    A loss part that repeats one exactly printed value to the end of the run no longer moves: its
    parameters get no gradient (they or their inputs went NaN, or are frozen), or it is not recomputed.
    """
    if values.size < min_rows or values[-1] == 0:
        return None
    same = values == values[-1]
    start = values.size - (int(np.argmin(same[::-1])) if not same.all() else values.size)
    if values.size - start < min_rows or printed_quantum(float(values[-1])) > max_quantum * abs(float(values[-1])):
        return None
    return start


def eval_losses(run: Run) -> list[str]:
    """The run's evaluation losses (not perplexities), by the vocabulary's reading of their names."""
    if run.evals.height == 0 or STEP not in run.evals.columns:
        return []
    return [
        c
        for c in run.evals.columns
        if c not in (STEP, LINE_NO, EPOCH) and vocab.classify(c).is_loss and not vocab.classify(c).is_perplexity
    ]


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


#: A loss part is frozen when its last value repeats exactly and the log printed it to this share of
#: its size or finer. Null (the healthy logs of bench/short_jump_null.py, 219 loss parts): over any
#: 8 rows, the smallest relative range of a healthy part is 1.3e-3 (a Mask2Former dice loss), so a
#: part printed to 1e-4 of itself that repeats one value over 8 rows is no noise of a moving loss.
PART_QUANTUM = 1e-4


class ConstantLossDetector(Analyzer):
    """The loss holds one value in every row (within ``max_range`` of it) over at least ``min_rows`` rows."""

    name = "constant-loss"
    options: ClassVar[tuple[Option, ...]] = (int_opt("min_rows", 3), fraction("max_range"))

    def __init__(self, *, min_rows: int = 8, max_range: float = MAX_RANGE) -> None:
        self.min_rows = min_rows
        self.max_range = max_range

    def analyze(self, run: Run) -> Detection:
        """At most one finding for the loss, over the whole run; else one per loss part frozen to the end."""
        s = robust.series(run, LOSS)
        level = constant_level(s.values, self.max_range) if s.n >= self.min_rows else None
        if level is None:
            parts = [f for c in other_objectives(run) if (f := self._frozen_part(run, c))]
            held_out = self._held_out(run)
            return Detection(tuple(parts + ([held_out] if held_out is not None else [])))
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

    def _held_out(self, run: Run) -> Finding | None:
        """LD402 at warning for the first evaluation loss (the most evaluations first) that holds one value
        over ``min_rows`` or more new evaluations."""
        series = [eval_series(run, c) for c in eval_losses(run)]
        for ser in sorted(series, key=lambda x: -x.n):
            v = ser.values[np.isfinite(ser.values)]
            new = int(np.count_nonzero(np.diff(v))) + 1 if v.size else 0
            level = constant_level(v, self.max_range) if new >= self.min_rows else None
            if level is None:
                continue
            spread = float(np.ptp(v))
            return codes.finding(
                "LD402",
                f"The evaluation loss `{ser.name}` is {level:.6g} at every one of its {v.size} evaluations "
                f"(range {spread:.3g}, {spread / abs(level):.1e} of it): the model's predictions on held-out "
                "data never change, so nothing is learned (a zero or frozen lr, parameters that get no "
                "gradient, an output stuck at one answer).",
                severity=Severity.WARNING,
                confidence=0.85,
                first_step=int(ser.steps[0]),
                last_step=int(ser.steps[-1]),
                evidence={
                    "column": ser.name,
                    "level": round(level, 6),
                    "range": round(spread, 6),
                    "evals": int(v.size),
                    "max_range": self.max_range,
                    "held_out": 1,
                },
            )
        return None

    def _frozen_part(self, run: Run, col: str) -> Finding | None:
        """LD402 at warning: the loss part ``col`` repeats one value over its last rows (``frozen_tail``)."""
        p = robust.series(run, col)
        start = frozen_tail(p.values, self.min_rows, PART_QUANTUM)
        if start is None:
            return None
        rows, value = p.n - start, float(p.values[-1])
        whole = start == 0
        ev: dict[str, float | int | str] = {
            "column": col,
            "level": value,
            "rows": rows,
            "from_step": int(p.steps[start]),
            "rows_of_part": p.n,
            "frozen": 1,
        }
        span = (
            f"every one of its {rows:,} rows"
            if whole
            else f"each of its last {rows:,} rows (steps {p.steps[start]:,}-{p.steps[-1]:,})"
        )
        moved = "" if whole else f", after moving over the {start:,} before"
        return codes.finding(
            "LD402",
            f"The loss part `{col}` is exactly {value:.10g} in {span}{moved}: that part of the objective never "
            "moves, so its parameters learn nothing (no gradient reaches them: they or their inputs went "
            "NaN, or are frozen) or it is not recomputed.",
            severity=Severity.WARNING,
            confidence=0.85,
            first_step=int(p.steps[start]),
            last_step=int(p.steps[-1]),
            line=int(p.lines[start]) or None,
            evidence=ev,
        )
