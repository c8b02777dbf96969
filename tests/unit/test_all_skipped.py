"""A log whose every step line skipped its update (Megatron prints no loss then) is read, and says
that no update was applied; a log with a single applied update, or with no skip counted, is not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.detectors.mixedprecision import every_row_skipped
from logdoctor.errors import LogdoctorError
from logdoctor.model import Severity


def _iteration(it: int, scale: float, skipped: int, loss: float | None) -> str:
    lm = f" lm loss: {loss:.6E} |" if loss is not None else ""
    return (
        f" iteration {it:8d}/    1000 | consumed samples: {it * 1024:12d} | elapsed time per iteration (ms): "
        f"129028.8 | learning rate: {0.0 if loss is None else 6e-5:.3E} | global batch size:  1024 |{lm} "
        f"loss scale: {scale:.1f} | number of skipped iterations: {skipped:3d} | number of nan iterations:   0 |"
    )


def _log(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "slurm.out"
    p.write_text("using world size: 16\n  train_iters ..................... 1000\n" + "\n".join(lines) + "\n")
    return p


def test_every_iteration_skipped_is_read_and_says_no_update(tmp_path: Path) -> None:
    log = _log(tmp_path, [_iteration(i, 2.0 ** (33 - i), 1, None) for i in (1, 2, 3)])
    report = pipeline.analyze(pipeline.load(str(log)))
    ld020 = [f for f in report.findings if f.code == "LD020"]
    assert ld020 and ld020[0].severity == Severity.WARNING and ld020[0].evidence.get("none_applied") == 1
    assert "No update was ever applied" in ld020[0].message
    assert report.run.n_steps == 3
    assert not any(f.code == "LD001" for f in report.findings)  # must not: a missing loss is no NaN loss


def test_a_log_with_applied_updates_keeps_its_calibration_info(tmp_path: Path) -> None:
    # must not: the usual start of a Megatron run, three skips while the scale calibrates, then losses
    lines = [_iteration(i, 2.0 ** (33 - i), 1, None) for i in (1, 2, 3)]
    rng = np.random.default_rng(0)
    lines += [_iteration(i, 2.0**30, 0, 10.0 - 0.01 * i + rng.normal(0, 0.05)) for i in range(4, 80)]
    report = pipeline.analyze(pipeline.load(str(_log(tmp_path, lines))))
    ld020 = [f for f in report.findings if f.code == "LD020"]
    assert ld020 and all(f.severity < Severity.WARNING for f in ld020), [f.message for f in ld020]
    assert not any(f.evidence.get("none_applied") for f in ld020)


def test_lines_without_a_loss_or_a_skip_are_still_refused(tmp_path: Path) -> None:
    # must not: step lines that carry no loss and count no skip say nothing of training
    with pytest.raises(LogdoctorError):
        pipeline.load(str(_log(tmp_path, [_iteration(i, 2.0**30, 0, None) for i in (1, 2, 3)])))


def test_every_row_skipped_needs_each_row() -> None:
    nan = float("nan")
    assert every_row_skipped(np.array([1.0, 1.0, 1.0]), np.array([nan, 1.0, 1.0]))
    assert not every_row_skipped(np.array([1.0, 0.0, 1.0]), np.array([nan, 1.0, 1.0]))
    assert not every_row_skipped(np.array([1.0, 1.0]), np.array([nan, 10.0]))  # 9 of those 10 were applied


def _deepspeed_loop(tmp_path: Path, skipped_of: int) -> Path:
    """A loop printing ``Epoch e, Loss: x`` (no step) with DeepSpeed's ``step=K, skipped=S`` every 10
    records; ``skipped_of``: S = K for K up to it (then S stays there)."""
    rng = np.random.default_rng(3)
    lines = []
    for i in range(1, 401):
        lines.append(f"Epoch {i // 16}, Loss: {0.97 + rng.normal(0, 0.03):.6f}, Positive Score: 0.01")
        if i % 10 == 0:
            lines.append(
                f"[2025-04-09 03:43:30,861] [INFO] [logging.py:96:log_dist] [Rank 0] step={i}, "
                f"skipped={min(i, skipped_of)}, lr=[1e-05, 1e-05], mom=[(0.9, 0.99), (0.9, 0.99)]"
            )
    p = tmp_path / "output.log"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_deepspeed_counters_beside_a_stepless_loop_say_every_step_skipped(tmp_path: Path) -> None:
    report = pipeline.analyze(pipeline.load(str(_deepspeed_loop(tmp_path, 10**9))))
    ld020 = [f for f in report.findings if f.code == "LD020"]
    assert ld020 and ld020[0].severity == Severity.ERROR and ld020[0].evidence.get("never_updated") == 1


def test_deepspeed_counters_with_a_calibration_only_are_no_error(tmp_path: Path) -> None:
    # must not: four skips while the scale calibrates, then 396 applied steps
    report = pipeline.analyze(pipeline.load(str(_deepspeed_loop(tmp_path, 4))))
    assert not any(f.code == "LD020" and f.severity == Severity.ERROR for f in report.findings)
