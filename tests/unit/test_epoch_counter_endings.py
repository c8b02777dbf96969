"""A run whose rows are placed by a per-epoch batch counter (``Epoch [24][4700/7330]``) is judged by how
much of its last epoch it did: a label naming the plan's last epoch is no proof that epoch finished."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.model import Report


def _mmdet(tmp_path: Path, plan_line: str, last_epoch: int, last_iter: int) -> Report:
    rng = np.random.default_rng(0)
    lines = ["2021-01-01 00:00:00,000 - mmdet - INFO - Config:", plan_line]
    k = 0
    for e in range(1, last_epoch + 1):
        for i in range(50, 201, 50):
            if e == last_epoch and i > last_iter:
                break
            k += 1
            loss = 1.5 * np.exp(-k / 10) + 0.4 + rng.normal(0, 0.02)
            lines.append(
                f"2021-01-01 00:00:00,000 - mmdet - INFO - Epoch [{e}][{i}/200]\tlr: 2.000e-02, eta: 1:00:00, "
                f"time: 0.500, data_time: 0.010, memory: 3000, loss_cls: {loss / 2:.4f}, loss: {loss:.4f}"
            )
    p = tmp_path / "train.log"
    p.write_text("\n".join(lines) + "\n")
    return pipeline.analyze(pipeline.load(str(p)))


@pytest.mark.parametrize("plan_line", ["total_epochs = 12", "runner = dict(type='EpochBasedRunner', max_epochs=12)"])
def test_stopped_inside_the_plans_last_epoch(tmp_path: Path, plan_line: str) -> None:
    st = _mmdet(tmp_path, plan_line, 12, 100).run.meta.structure
    assert st is not None and st.planned_epochs == 12
    assert st.ending == "stopped", (st.ending, st.ending_source, st.last_epoch)


@pytest.mark.parametrize("plan_line", ["total_epochs = 12", "runner = dict(type='EpochBasedRunner', max_epochs=12)"])
def test_the_plans_last_epoch_done_is_finished(tmp_path: Path, plan_line: str) -> None:
    # must not: the last row at [12][200/200] finished the run
    st = _mmdet(tmp_path, plan_line, 12, 200).run.meta.structure
    assert st is not None and st.ending == "finished", (st.ending, st.ending_source, st.last_epoch)
