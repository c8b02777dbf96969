"""A config dump's iteration limit that the run's own rows pass is not the run's planned steps
(keithito Tacotron prints ``max_iters: 200``, the decoder's step limit, and trains for 55,000 steps)."""

from __future__ import annotations

from pathlib import Path

from logdoctor import pipeline
from logdoctor.model import RunStructure


def _structure(tmp_path: Path, head: list[str], last: int) -> RunStructure:
    rows = [f"Step {k}  [1.2 sec/step, loss={1 - k / (3 * last):.5f}]" for k in range(50, last + 1, 50)]
    path = tmp_path / "train.log"
    path.write_text("\n".join([*head, *rows]) + "\n")
    st = pipeline.load(str(path)).meta.structure
    assert st is not None
    return st


def test_a_limit_the_rows_pass_is_no_plan(tmp_path: Path) -> None:
    st = _structure(tmp_path, ["Hyperparameters:", "  max_iters: 200", "  outputs_per_step: 5"], 5000)
    assert st.planned is None and st.ending == "unknown" and st.finished is None


def test_a_budget_the_rows_stay_within_is_the_plan(tmp_path: Path) -> None:
    """Reached within one logging interval: finished; short of it: stopped before its plan."""
    assert _structure(tmp_path, ["  max_iters: 5000"], 5000).ending == "finished"
    st = _structure(tmp_path, ["  max_iters: 5000"], 3000)
    assert (st.planned, st.ending) == (5000, "stopped")
