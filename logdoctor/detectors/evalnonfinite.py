"""NaN/inf evaluation values (LD009): an eval loss that ranks no checkpoint.

A score that is NaN only where its family's other scores are finite (detectron2's ``bbox/APs`` when the
set holds no small objects) measured nothing, and is no finding (:func:`unmeasured`).

ERROR while the last evaluation is still NaN/inf (the model as it stands is broken on held-out data),
WARNING when a later evaluation recovered, information when the training loss was non-finite first
(LD001 says it; this follows).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor import codes, vocab
from logdoctor.detectors.base import NO_EVAL, Analyzer, Detection
from logdoctor.model import LINE_NO, LOSS, STEP, Finding, Run, Severity

#: Eval columns that are timings or counts, never a metric (HF ``eval_runtime``...).
_NOT_METRIC = ("runtime", "per_second", "samples", "steps_per", "epoch", "time", "tokens")


#: Eval columns that hold the best value so far, not an evaluation's result: their first value is
#: the tracker's start, ``inf`` before any evaluation (simple-nmt ``best_loss=inf``).
_RUNNING_BEST = "best"


def _metric_columns(evals: pl.DataFrame) -> list[str]:
    """The float eval columns that are metrics (not step, line, timings, throughput or a best so far)."""
    return [
        c
        for c, dtype in evals.schema.items()
        if c not in (STEP, LINE_NO)
        and dtype.is_float()
        and not any(w in c.lower() for w in _NOT_METRIC)
        and not c.lower().startswith(_RUNNING_BEST)
    ]


def _family(col: str) -> str:
    """The family of a metric: its name up to the last ``/`` (``bbox/APs`` -> ``bbox``), else all but its
    last word (``bbox_mAP_s`` -> ``bbox_map``)."""
    if "/" in col:
        return col.rsplit("/", 1)[0]
    return vocab.normalize_key(col).rsplit("_", 1)[0]


def unmeasured(ev: pl.DataFrame, col: str, cols: list[str], bad: np.ndarray) -> bool:
    """True when a score (higher is better) is NaN only where a sibling score of its family is finite at
    the same evaluation: a bucket with nothing to measure (COCO's AP for small objects when the set holds
    none: detectron2 writes NaN), not a broken evaluation."""
    if vocab.direction(col) is not vocab.Direction.UP or not np.isnan(ev[col].cast(pl.Float64).to_numpy()[bad]).all():
        return False
    fam = _family(col)
    sibs = [c for c in cols if c != col and _family(c) == fam and vocab.direction(c) is vocab.Direction.UP]
    if not sibs:
        return False
    finite = np.zeros(ev.height, dtype=bool)
    for c in sibs:
        finite |= np.isfinite(ev[c].cast(pl.Float64).fill_null(np.nan).to_numpy())
    return bool(finite[bad].all())


class EvalNonFiniteDetector(Analyzer):
    """Eval metric columns with NaN/inf values: one finding per set of columns bad at the same
    evaluations (``valid_loss`` and ``valid_ppl = exp(valid_loss)`` fail together)."""

    name = "eval-nonfinite"

    def analyze(self, run: Run) -> Detection:
        """LD009 per group of eval metric columns that hold a NaN or an infinity at the same rows."""
        ev = run.evals
        if ev.height == 0:
            return Detection(skipped=NO_EVAL)
        groups: dict[bytes, list[str]] = {}
        cols = _metric_columns(ev)
        for col in cols:
            vals = ev[col].cast(pl.Float64).to_numpy()
            bad = ~np.isfinite(vals) & ~ev[col].is_null().to_numpy()
            if bad.any() and not unmeasured(ev, col, cols, bad):
                groups.setdefault(np.packbits(bad).tobytes() + bytes([bad.size % 8]), []).append(col)
        return Detection(tuple(self._finding(run, ev, cols) for cols in groups.values()))

    @staticmethod
    def _finding(run: Run, ev: pl.DataFrame, cols: list[str]) -> Finding:
        col = cols[0]
        t = ev.select(STEP, LINE_NO, col).drop_nulls(col)
        vals = t[col].to_numpy().astype(float)
        idx = np.flatnonzero(~np.isfinite(vals))
        n_bad = int(idx.size)
        steps = t[STEP].to_list()
        first, last = steps[int(idx[0])], steps[int(idx[-1])]
        n_nan, n_inf = int(np.isnan(vals).sum()), int(np.isinf(vals).sum())
        kinds = " and ".join(k for k, n in (("NaN", n_nan), ("inf", n_inf)) if n)
        where = f"at step {first}" if first == last else f"from step {first} to {last}"
        names = " and ".join(cols) if len(cols) <= 3 else f"{', '.join(cols[:3])} and {len(cols) - 3} more"
        verb = "is" if len(cols) == 1 else "are"
        if n_bad == vals.size:
            msg = f"Every {names} of this run ({n_bad} evaluations) {verb} {kinds}, {where}."
        else:
            msg = f"{names} {verb} {kinds} at {n_bad} of {vals.size} evaluations, {where}."
        line = t[LINE_NO][int(idx[0])]
        still = bool(idx[-1] == vals.size - 1)
        before = run.table.filter(pl.col(STEP) <= first)[LOSS] if first is not None else run.table[LOSS]
        follows = bool((~np.isfinite(before.drop_nulls().cast(pl.Float64).to_numpy())).any())
        if follows:
            msg += " The training loss was already non-finite by then (LD001): this follows from it."
        elif still:
            msg += " The last evaluation is among them: the model as it stands is broken on held-out data."
        else:
            msg += " A later evaluation recovered."
        severity = Severity.INFO if follows else Severity.ERROR if still else Severity.WARNING
        return codes.finding(
            "LD009",
            msg,
            severity=severity,
            first_step=int(first) if first is not None else None,
            last_step=int(last) if last is not None else None,
            line=int(line) if line is not None else None,
            evidence={
                "column": col,
                "columns": ", ".join(cols),
                "n_nonfinite": n_bad,
                "n_evals": int(vals.size),
                "n_nan": n_nan,
                "n_inf": n_inf,
                "last_eval_nonfinite": still,
                "follows_nonfinite_loss": follows,
            },
        )
