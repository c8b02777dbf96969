"""Each launch appended to a log is judged against the plan it stated, and a silent stop that a later
launch answered is a relaunch (information), not a problem of the log."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from logdoctor import pipeline
from logdoctor.model import Report, Severity


def _launch(max_iter: int, last_iter: int, seed: int, *, finish: bool) -> list[str]:
    """A detectron2-style launch: a config dump stating MAX_ITER, then a row every 20 iterations."""
    rng = np.random.default_rng(seed)
    out = [
        "[08/30 23:00:00] d2.engine.defaults INFO: Running with full config:",
        "SOLVER:",
        f"  MAX_ITER: {max_iter}",
        "  BASE_LR: 0.0001",
    ]
    for k, it in enumerate(range(19, last_iter + 1, 20)):
        loss = 20.0 + 50.0 * np.exp(-k / 15) + rng.normal(0, 0.5)
        out.append(
            f"[08/30 23:01:00] d2.utils.events INFO:  eta: 0:10:00  iter: {it}  total_loss: {loss:.3f}"
            f"  lr: 0.0001  max_mem: 9000M"
        )
    if finish:
        out.append(f"[08/30 23:15:00] d2.engine.hooks INFO: Overall training speed: {last_iter} iterations")
    return out


def _analyze(tmp_path: Path, launches: list[list[str]]) -> Report:
    log = tmp_path / "log.txt"
    log.write_text("\n".join(line for launch in launches for line in launch) + "\n")
    return pipeline.analyze(pipeline.load(str(log)))


def test_each_launch_is_judged_against_its_own_plan(tmp_path: Path) -> None:
    # launch 1 finished its 2000; launch 2 stopped at 500 of 10000 with no message; launch 3 finished 4000
    r = _analyze(
        tmp_path,
        [
            _launch(2000, 1999, 1, finish=True),
            _launch(10000, 499, 2, finish=False),
            _launch(4000, 3999, 3, finish=True),
        ],
    )
    first, second = r.run.earlier
    assert first.meta.structure is not None and first.meta.structure.planned == 2000
    assert first.meta.structure.ending == "finished"  # must not: judged against the last launch's 4000
    assert second.meta.structure is not None and second.meta.structure.planned == 10000
    assert second.meta.structure.ending == "stopped"
    assert r.run.meta.structure is not None and r.run.meta.structure.planned == 4000


def test_a_silent_stop_answered_by_a_relaunch_is_information(tmp_path: Path) -> None:
    r = _analyze(
        tmp_path,
        [
            _launch(2000, 1999, 1, finish=True),
            _launch(10000, 499, 2, finish=False),
            _launch(4000, 3999, 3, finish=True),
        ],
    )
    assert r.status == "ok", [(p.index, [f.code for f in p.findings]) for p in r.runs]
    assert not any(p.findings for p in r.earlier_runs)
    assert [p.ending for p in r.earlier_runs] == ["finished", "stopped"]


def test_the_last_launchs_silent_stop_stays_a_warning(tmp_path: Path) -> None:
    # must find: nothing followed the last launch's stop at 500 of 10000
    r = _analyze(tmp_path, [_launch(2000, 1999, 1, finish=True), _launch(10000, 499, 2, finish=False)])
    stopped = [f for f in r.findings if f.code == "LD016"]
    assert stopped and stopped[0].severity == Severity.WARNING
    assert r.status == "warning"
