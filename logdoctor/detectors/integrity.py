"""Run-integrity findings: resumes (LD003), loss jumps at resumes (LD004), non-monotonic steps
(LD005), degenerate columns (LD007) and stuck step counters (LD008)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from logdoctor import codes
from logdoctor.detectors.base import Analyzer, Detection
from logdoctor.errors import ConfigError
from logdoctor.model import LOSS, STEP, Finding, Run, StuckCounter
from logdoctor.options import Option, at_least, int_opt, positive
from logdoctor.structure.counters import degenerate_columns, is_failure_counter

_MAD_SCALE = 1.4826
#: Columns that name the process that wrote a record.
RANK_COLUMNS = ("rank", "global_rank", "local_rank", "process_index")
#: Share of the steps written again with other values for the log to have several writers of every
#: step (ranks): a relaunch repeats a stretch, not nearly all of the run.
EVERY_STEP = 0.9


def several_ranks(run: Run) -> str | None:
    """What says several ranks wrote the rows: a rank column with two or more values, or nearly
    every step written again with other values (the ranks' own losses); None otherwise."""
    for col in RANK_COLUMNS:
        if col in run.table.columns and (k := run.table[col].drop_nulls().n_unique()) >= 2:
            return f"the records name {k} {col}s"
    if run.n_steps and run.meta.repeated_steps >= EVERY_STEP * run.n_steps:
        return f"{run.meta.repeated_steps} of {run.n_steps} steps were written again with other values"
    return None


#: Formats whose records are file lines (the others count records: tracker history, events).
LINE_FORMATS = frozenset({"text", "jsonl", "csv"})


def stuck_findings(stuck: tuple[StuckCounter, ...], fmt: str) -> list[Finding]:
    """LD008 for stuck step counters (the longest one named; analyze and tail share this)."""
    if not stuck:
        return []
    top = max(stuck, key=lambda c: c.records)
    unit = "lines" if fmt in LINE_FORMATS else "records"
    where = f" (lines {top.first_line:,}-{top.last_line:,})" if top.first_line else ""
    if top.whole:
        text = f"The step counter never advances: {top.records:,} {unit} at step {top.step}"
    else:
        text = f"The step counter stopped advancing: {top.records:,} {unit} in a row at step {top.step}{where}"
    total = sum(c.records for c in stuck)
    more = f"; {len(stuck) - 1} more such run(s), {total:,} {unit} in all" if len(stuck) > 1 else ""
    return [
        codes.finding(
            "LD008",
            f"{text}{more}; the last write of the step is kept, so the analyses see "
            f"{'one row' if top.whole else 'one row for each such run'}.",
            first_step=top.step,
            last_step=top.step,
            evidence={
                "step": top.step,
                "records": top.records,
                "first_line": top.first_line,
                "last_line": top.last_line,
                "never_advances": top.whole,
                "stuck_runs": len(stuck),
                "stuck_records": total,
            },
        )
    ]


def _resume_jump(step: np.ndarray, loss: np.ndarray, at: int, pre: int, post: int) -> tuple[float, float, float] | None:
    """(median loss before, median loss after, robust noise) around a resume at step ``at``."""
    ok = np.isfinite(loss)
    before = loss[ok & (step < at)][-pre:]
    after = loss[ok & (step >= at)][:post]
    if before.size < 3 or after.size < 1:
        return None
    level = float(np.median(before))
    noise = _MAD_SCALE * float(np.median(np.abs(before - level)))
    return level, float(np.median(after)), max(noise, 1e-9 * max(abs(level), 1.0))


class IntegrityDetector(Analyzer):
    """Reports how the log's structure was resolved, and loss jumps right after a resume.

    Args:
        pre_window: finite losses before a resume that set the level and the noise (median, MAD).
        post_window: finite losses after a resume whose median is compared with that level.
        min_rel_jump: smallest relative rise (after / before - 1) reported as a jump.
        min_z: smallest rise in robust noise units (MAD of the pre-window) reported as a jump.
    """

    name = "integrity"
    #: every keyword of ``__init__`` with its type and bounds (checked where configured)
    options: ClassVar[tuple[Option, ...]] = (
        int_opt("pre_window", 3),
        int_opt("post_window", 1),
        at_least("min_rel_jump", 0),
        positive("min_z"),
    )

    def __init__(
        self,
        *,
        pre_window: int = 10,
        post_window: int = 3,
        min_rel_jump: float = 0.10,
        min_z: float = 4.0,
    ) -> None:
        if pre_window < 3 or post_window < 1:
            raise ConfigError(f"integrity: need pre_window >= 3, post_window >= 1 ({pre_window}, {post_window})")
        self.pre_window = pre_window
        self.post_window = post_window
        self.min_rel_jump = min_rel_jump
        self.min_z = min_z

    def analyze(self, run: Run) -> Detection:
        """Findings LD003/LD004/LD005/LD007/LD008 for the run (pure)."""
        found = [
            *stuck_findings(run.meta.stuck_counters, run.meta.format),
            *self._resumes(run),
            *self._nonmonotonic(run),
            *self._degenerate(run),
        ]
        return Detection(findings=tuple(found))

    def _resumes(self, run: Run) -> list[Finding]:
        meta = run.meta
        first = int(run.table[STEP][0]) if run.table.height else 0
        # restarts at or before the first kept step began a fresh run appended to the log: the
        # kept trajectory is that run alone, so nothing in it was resumed (structure lists them)
        inside = [s for s in meta.resume_steps if s > first]
        if not meta.resumes or not inside:
            return []
        steps = ", ".join(str(s) for s in inside)
        st = meta.structure
        fell = [r.step for r in (st.restarts if st else ()) if r.source == "epoch_fell_back" and r.step in inside]
        how = (
            f" At step {', '.join(str(s) for s in fell)} only the epoch column shows it: the epoch fell back "
            "while the step continued (a resume whose data pass started again)."
            if fell
            else ""
        )
        by_resumes = meta.resume_overwritten
        more = meta.overwritten_steps - by_resumes
        rewrites = (
            f"; {more} more record(s) were replaced by a later, non-identical write of the same step" if more else ""
        )
        out = [
            codes.finding(
                "LD003",
                f"The run was resumed {len(inside)} time(s) (at step {steps}); the resume(s) replaced "
                f"{by_resumes} earlier record(s) of the steps they wrote again{rewrites}.{how}",
                first_step=inside[0],
                last_step=inside[-1],
                evidence={
                    "resumes": len(inside),
                    "appended_runs": meta.resumes - len(inside),
                    "overwritten_steps": meta.overwritten_steps,
                    "resume_overwritten": by_resumes,
                    "resume_steps": steps,
                },
            )
        ]
        step = run.table[STEP].to_numpy()
        loss = run.table[LOSS].to_numpy()
        for at in inside:
            out += self._jump(step, loss, at)
        return out

    def _jump(self, step: np.ndarray, loss: np.ndarray, at: int) -> list[Finding]:
        got = _resume_jump(step, loss, at, self.pre_window, self.post_window)
        if got is None:
            return []
        before, after, noise = got
        rel = after / before - 1.0 if before > 0 else float("inf")
        z = (after - before) / noise
        if rel < self.min_rel_jump or z < self.min_z:
            return []
        return [
            codes.finding(
                "LD004",
                f"After the resume at step {at} the loss jumped from {before:.4g} to {after:.4g} "
                f"(+{100 * rel:.0f}%, {rel + 1:.3g}x its level before; medians of the {self.pre_window} "
                f"rows before and the {self.post_window} from the resume).",
                first_step=at,
                last_step=at,
                confidence=min(1.0, 0.5 + 0.05 * z),
                evidence={
                    "resume_step": at,
                    "loss_before": before,
                    "loss_after": after,
                    "rel_jump": rel,
                    "robust_z": z,
                    "pre_window": self.pre_window,
                    "post_window": self.post_window,
                },
            )
        ]

    def _nonmonotonic(self, run: Run) -> list[Finding]:
        n, same = run.meta.nonmonotonic_steps, run.meta.repeated_steps
        if not n:
            return []
        several = several_ranks(run)
        what = f"went backwards {n - same} time(s)" if n > same else ""
        if same:
            what += f"{' and ' if what else ''}repeated the step just before (other values) {same} time(s)"
        return [
            codes.finding(
                "LD005",
                f"Step numbers {what} without a recognisable resume (identical records counted apart); "
                "the rows were sorted by step and a repeated step keeps its last write.",
                evidence={"nonmonotonic_steps": n, "repeated_steps": same, "steps": run.n_steps},
                **({"hint": f"{several}: log one rank only, or give each rank its own file."} if several else {}),
            )
        ]

    def _degenerate(self, run: Run) -> list[Finding]:
        out = []
        for col, value in degenerate_columns(run.table):
            if is_failure_counter(col) and value == 0:  # a failure counter at 0: good news
                out.append(
                    codes.finding(
                        "LD021",
                        f"{col} is 0 at every step: no such failure occurred.",
                        evidence={"column": col, "value": value, "rows": run.n_steps},
                    )
                )
                continue
            out.append(
                codes.finding(
                    "LD007",
                    f"Column {col!r} is {value:g} at every step; it carries no information.",
                    evidence={"column": col, "value": value, "rows": run.n_steps},
                )
            )
        return out
