"""Rows that print no step (HF console dicts) placed by the tqdm bar drawn between them, and the bar's
total as the plan (HF Trainer's ProgressCallback bar, as a wandb ``output.log`` keeps its drawings)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.model import LINE_NO
from logdoctor.structure.barsteps import bar_steps
from tests.unit.blindcache import blind_log


def _bar(n: int, total: int) -> str:
    """tqdm/std.py format_meter: ``'{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]'``."""
    pct = int(100 * n / total)
    return f"{pct:3d}%|{'#' * (pct // 10):<10}| {n}/{total} [04:21<70:47:24, 10.97s/it]"


def _console(tmp: Path, rows: int, every: int, total: int) -> Path:
    lines = []
    for k in range(1, rows + 1):
        lines.append(_bar(k * every - 1, total))
        lines.append(
            f"INFO | 2024-04-30 11:16:10 | autotrain.trainers.common:on_log:226 - "
            f"{{'loss': {2.0 - k / 1000:.4f}, 'grad_norm': 0.5, 'learning_rate': 2e-06, "
            f"'epoch': {k * every / 100:.4f}}}"
        )
    if rows * every >= total:  # the Trainer's summary when its loop ends: the run's mean loss, no step
        lines.append(
            "INFO | 2024-05-05 09:47:09 | autotrain.trainers.common:on_log:226 - {'train_runtime': "
            "2556.4, 'train_samples_per_second': 0.728, 'train_steps_per_second': 0.091, "
            "'train_loss': 0.2116, 'epoch': 20.0}"
        )
    path = tmp / "output.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_run_cut_short_under_its_bar(tmp_path: Path) -> None:
    st = pipeline.load(str(_console(tmp_path, 40, 25, 2000))).meta.structure
    assert (st.last_step, st.planned, st.planned_source, st.ending) == (1000, 2000, "progress_bar", "stopped")


def test_a_run_that_reached_its_bars_total(tmp_path: Path) -> None:
    run = pipeline.load(str(_console(tmp_path, 80, 25, 2000)))
    st = run.meta.structure
    assert (st.rows, st.last_step, st.ending) == (80, 2000, "finished")
    assert run.meta.skip_reasons.get("run summary record") == 1


def test_a_bar_that_does_not_move_with_the_rows_says_nothing() -> None:
    """An evaluation bar drawn once, or bars that are not between the rows, give no stride."""
    table = pl.DataFrame({LINE_NO: [10, 20, 30, 40]})
    assert bar_steps(table, ((5, 50, 50),)) is None  # one drawing before every row
    assert bar_steps(table, ((5, 1, 9), (15, 1, 9), (25, 1, 9), (35, 1, 9))) is None  # never moves
    assert bar_steps(table, ((5, 24, 99), (15, 49, 99), (25, 74, 99), (35, 99, 99))) == (25, 99)


@pytest.mark.parametrize(
    ("name", "last", "ending"),
    [
        ("autotrain_llama2_korquad_stopped66pct_wandb_output.log", 15450, "stopped"),
        ("autotrain_llama2_korquad_finished_wandb_output.log", 23250, "finished"),
    ],
)
def test_real_loguru_console_dicts(name: str, last: int, ending: str) -> None:
    st = pipeline.load(str(blind_log(name))).meta.structure
    assert (st.planned, st.ending) == (23260, ending)
    assert st.last_step == last
