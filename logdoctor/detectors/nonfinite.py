"""Non-finite loss (LD001): NaN/inf in the loss column, where it starts, how long, and whether it recovered."""

from __future__ import annotations

import numpy as np
import polars as pl

from logdoctor import codes, vocab
from logdoctor.detectors import robust
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.model import LINE_NO, LOSS, STEP, EvidenceValue, Finding, Run


def other_objectives(run: Run) -> list[str]:
    """The loss parts a log carries beside the analysed loss (:func:`logdoctor.vocab.is_loss_part`), in
    the table's order: numeric columns only, and not the part read as the loss itself (a log's main
    objective, copied to ``loss``)."""
    out = []
    for col in run.table.columns:
        if col == LOSS or not vocab.is_loss_part(col) or not run.table.schema[col].is_numeric():
            continue
        if run.table[col].cast(pl.Float64).equals(run.table[LOSS], check_names=False, null_equal=True):
            continue
        out.append(col)
    return out


class NonFiniteDetector(Analyzer):
    """NaN/inf in the loss column and in the log's other objectives (loss parts), never elsewhere:
    NaN timings are no training fault."""

    name = "nonfinite"

    def analyze(self, run: Run) -> Detection:
        """LD001: the first bad step, count, runs of bad steps and whether training recovered; for the
        analysed loss and for each other objective the log carries (a GAN's discriminator loss...)."""
        main = self._column(run, LOSS)
        if main is not None:  # the parts of a non-finite loss are that one fault, said once
            return Detection((main,))
        found = [self._column(run, c) for c in other_objectives(run)]
        return Detection(tuple(f for f in found if f is not None))

    def _column(self, run: Run, col: str) -> Finding | None:
        if not run.table.schema[col].is_float():
            return None
        t = run.table.select(STEP, col, LINE_NO).drop_nulls(col)
        loss = t[col].to_numpy()
        bad = ~np.isfinite(loss)
        if not bad.any():
            return None
        steps = t[STEP].to_numpy()
        starts, ends = robust.runs_of(bad)
        first, last = int(starts[0]), int(ends[-1] - 1)
        recovered = bool(np.isfinite(loss[last + 1 :]).any())
        n_bad = int(bad.sum())
        ev: dict[str, EvidenceValue] = {
            "first_step": int(steps[first]),
            "last_step": int(steps[last]),
            "n_nonfinite": n_bad,
            "fraction": round(n_bad / loss.size, 6),
            "n_runs": int(starts.size),
            "longest_run": int((ends - starts).max()),
            "n_nan": int(np.isnan(loss).sum()),
            "n_inf": int(np.isinf(loss).sum()),
            "recovered": recovered,
            "all_nonfinite": bool(bad.all()),
        }
        what = "loss" if col == LOSS else f"objective `{col}`"
        if col != LOSS:
            ev["objective"] = col
        if bad.all():
            msg = f"Every logged {what} ({n_bad}) is NaN/inf: training diverged from the first logged step {steps[0]}."
        else:
            msg = (
                f"The {what} is NaN/inf at {n_bad} step(s) in {starts.size} run(s), first at step {steps[first]}; "
                + ("training logged finite losses again afterwards." if recovered else "it never recovered.")
            )
        line = t[LINE_NO][first]
        return codes.finding(
            "LD001",
            msg,
            first_step=int(steps[first]),
            last_step=int(steps[last]),
            line=int(line) if line is not None else None,
            evidence=ev,
        )
