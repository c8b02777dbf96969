"""One iteration printed by two line shapes is one record; only a real decrease is non-monotonic."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from logdoctor import pipeline
from logdoctor.ingest.parsers.samestep import SHAPE, merge_shapes
from logdoctor.model import Severity

# Megatron ``iteration N/ T |`` lines copied from microsoft/Megatron-DeepSpeed
# examples/MoE/log/gpt3-0.125B-tokendropping-graduallyIncrease-lr-3.0e-4-with-kernel.log
# (commit 2f2b49f3cb35625ca4c9714e4c23acb4638a8f80, the repository's LICENSE applies), lines
# 2721-2733. Before each, the line DeepSpeed's pipeline engine prints for the same step
# (``print(f'steps: {global_steps} loss: {agg_train_loss:0.4f} iter time (s): ... samples/sec:
# ...')`` in deepspeed/runtime/pipe/engine.py): Megatron-DeepSpeed with a pipeline writes both.
MEGATRON = [
    " iteration       10/ 1716613 | consumed samples:         2560 | consumed tokens:      5242880 |"
    " elapsed time per iteration (ms): 849.6 | learning rate: 5.308E-07 | global batch size:   256 |"
    " lm loss: 1.069056E+01 | loss scale: 2048.0 | number of skipped iterations:   0 |"
    " number of nan iterations:   0 |",
    " iteration       20/ 1716613 | consumed samples:         5120 | consumed tokens:     10485760 |"
    " elapsed time per iteration (ms): 473.2 | learning rate: 1.121E-06 | global batch size:   256 |"
    " lm loss: 1.062032E+01 | loss scale: 2048.0 | number of skipped iterations:   0 |"
    " number of nan iterations:   0 |",
    " iteration       30/ 1716613 | consumed samples:         7680 | consumed tokens:     15728640 |"
    " elapsed time per iteration (ms): 578.4 | learning rate: 1.710E-06 | global batch size:   256 |"
    " lm loss: 1.048839E+01 | loss scale: 2048.0 | number of skipped iterations:   0 |"
    " number of nan iterations:   0 |",
    " iteration       40/ 1716613 | consumed samples:        10240 | consumed tokens:     20971520 |"
    " elapsed time per iteration (ms): 543.7 | learning rate: 2.300E-06 | global batch size:   256 |"
    " lm loss: 1.025902E+01 | loss scale: 2048.0 | number of skipped iterations:   0 |"
    " number of nan iterations:   0 |",
]
DEEPSPEED = [
    "steps: 10 loss: 10.6906 iter time (s): 0.850 samples/sec: 301.318",
    "steps: 20 loss: 10.6203 iter time (s): 0.473 samples/sec: 540.998",
    "steps: 30 loss: 10.4884 iter time (s): 0.578 samples/sec: 442.600",
    "steps: 40 loss: 10.2590 iter time (s): 0.544 samples/sec: 470.845",
]


def _write(tmp_path: Path, lines: list[str]) -> str:
    path = tmp_path / "train.out"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _interleaved(n: int, drop_at: int | None = None) -> list[str]:
    """Generated Megatron-DeepSpeed output: a ``steps:`` line then an ``iteration`` line per step
    (every 10 steps); ``drop_at``: the step counter goes back by 50 there (a real decrease)."""
    out: list[str] = []
    step = 0
    for k in range(n):
        step += 10
        if drop_at is not None and k == drop_at:
            step -= 50
        loss = 11.0 - 0.01 * k
        out.append(f"steps: {step} loss: {loss:.4f} iter time (s): 0.500 samples/sec: 512.000")
        out.append(
            f" iteration {step:8d}/   10000 | consumed samples: {step * 256:12d} | elapsed time per "
            f"iteration (ms): 500.0 | learning rate: 1.000E-04 | global batch size:   256 | lm loss: "
            f"{loss:.6E} | loss scale: 4096.0 | number of skipped iterations:   0 | number of nan "
            "iterations:   0 |"
        )
    return out


def test_real_megatron_lines_with_deepspeed_lines_are_one_record_per_step(tmp_path: Path) -> None:
    lines = [x for pair in zip(DEEPSPEED, MEGATRON, strict=True) for x in pair]
    run = pipeline.load(_write(tmp_path, lines))
    assert run.table["step"].to_list() == [10, 20, 30, 40]
    assert run.meta.nonmonotonic_steps == 0 and run.meta.duplicate_steps == 0
    # the Megatron line has more values: its lm loss, lr and consumed samples are the record's
    assert run.table["loss"].to_list() == [10.69056, 10.62032, 10.48839, 10.25902]
    assert run.table["lr"].to_list() == [5.308e-07, 1.121e-06, 1.710e-06, 2.300e-06]
    assert any("two line shapes" in n for n in run.meta.notes)


def test_generated_interleaved_shapes_give_no_warning(tmp_path: Path) -> None:
    run = pipeline.load(_write(tmp_path, _interleaved(200)))
    report = pipeline.analyze(run)
    assert run.n_steps == 200 and run.meta.nonmonotonic_steps == 0
    assert "LD005" not in {f.code for f in report.findings}


def test_a_real_decrease_is_still_non_monotonic(tmp_path: Path) -> None:
    # both shapes go back 50 steps at row 100: one backward jump (a resume: it rewrites steps)
    run = pipeline.load(_write(tmp_path, _interleaved(200, drop_at=100)))
    assert run.meta.resumes + run.meta.nonmonotonic_steps == 1
    # the same jump in a log of iteration lines alone is read the same way
    alone = [ln for ln in _interleaved(200, drop_at=100) if ln.startswith(" iteration")]
    run2 = pipeline.load(_write(tmp_path, alone))
    assert (run2.meta.resumes, run2.meta.nonmonotonic_steps) == (run.meta.resumes, run.meta.nonmonotonic_steps)


def test_same_shape_repeats_are_left_to_structure() -> None:
    t = pl.DataFrame(
        {"line_no": [1, 2, 3, 4], "step": [10, 10, 20, 20], "loss": [1.0, 1.1, 0.9, 0.8], SHAPE: [0, 0, 0, 1]}
    )
    out, merged = merge_shapes(t)
    assert merged == 1  # only rows 3-4 (another shape) merge; rows 1-2 repeat one shape
    assert out["step"].to_list() == [10, 10, 20]
    assert SHAPE not in out.columns


def test_a_shape_seen_twice_at_one_step_splits_the_record() -> None:
    t = pl.DataFrame(
        {"line_no": [1, 2, 3], "step": [5, 5, 5], "loss": [1.0, None, 2.0], "lr": [None, 0.1, None], SHAPE: [0, 1, 0]}
    )
    out, merged = merge_shapes(t)
    assert merged == 1
    assert out["loss"].to_list() == [1.0, 2.0]
    assert out["lr"].to_list() == [0.1, None]


# A real interleaved Megatron-DeepSpeed log: bigscience-workshop/bigscience
# experiments/gpt2-meg-ds-3d-old/meg_ds_3d_gpt2_perf_n16.out (commit ac3ece910f83c2a912ce4ecf32bef1bf1d4d6657,
# Apache-2.0), lines 3131-3134, 11121, 12001-12005, 12064-12069 verbatim: DeepSpeed's log_dist
# ``step=N, skipped=..`` line, its pipeline engine's ``steps: N loss:`` line and Megatron's
# ``iteration N/ 1000 |`` line for each of the run's two iterations, between NCCL lines of other ranks.
# (The only such log found in public sources: the run stopped after 2 iterations.)
REAL_INTERLEAVED = Path(__file__).parents[1] / "data" / "excerpts" / "megatron_ds_3d_gpt2_steps_and_iterations.txt"


def test_real_interleaved_megatron_deepspeed_log_is_one_record_per_iteration() -> None:
    text = REAL_INTERLEAVED.read_text()
    # an independent reading of the file: every iteration is printed by both shapes
    ds = [int(s) for s in re.findall(r"^steps: (\d+) loss:", text, re.M)]
    meg = {int(s): float(v) for s, v in re.findall(r"iteration\s+(\d+)/.*?lm loss: ([\d.E+-]+)", text)}
    assert ds == sorted(meg) == [1, 2]
    run = pipeline.load(str(REAL_INTERLEAVED))
    assert run.table["step"].to_list() == ds
    assert run.table["loss"].to_list() == [meg[s] for s in ds]
    assert run.meta.nonmonotonic_steps == 0 and run.meta.duplicate_steps == 0 and run.meta.resumes == 0
    report = pipeline.analyze(run)
    assert "LD005" not in {f.code for f in report.findings}
    # the excerpt ends after the run's 2 iterations of 1,000 without a word: that stop is its only warning
    assert max((f.severity for f in report.findings if f.code != "LD016"), default=Severity.INFO) == Severity.INFO
    assert [f.code for f in report.findings if f.severity > Severity.INFO] == ["LD016"]
