"""Lines under an evaluation banner are evaluation results; a log of evaluations only is analysed as such."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers.evalsections import HEADER, has_banner


@pytest.mark.parametrize(
    ("line", "banner"),
    [
        ("***** Evaluating perplexity, Epoch 1/2 *****", True),  # DeepSpeedExamples run_clm_no_trainer
        ("***** Running Evaluation *****", True),  # HF Trainer
        ("Evaluating...", True),
        ("Running validation", True),
        ("    validation:", False),  # a config key (Megatron's dataset split)
        ("+++ eval 'export PATH=/x'", False),  # shell trace
        ("validation: iter 5, dev. ppl 3.2", False),  # an eval result line itself
        ("[eval] iter 5: train 1.0 val 2.0", False),
    ],
)
def test_banner_rule(line: str, banner: bool) -> None:
    assert bool(HEADER.match(line)) is banner
    assert has_banner(pl.DataFrame({"msg": ["x", line, "y"]})) is banner


def _train_and_eval(n: int) -> list[str]:
    """Generated: a training line every step, and every 10 steps an evaluation banner followed
    (after a progress line) by a result line in the same words as a training line."""
    out: list[str] = []
    for step in range(1, n + 1):
        out.append(f"step: {step} loss: {3.0 - 0.01 * step:.4f} lr: 0.001")
        if step % 10 == 0:
            out += ["***** Running Evaluation *****", "  Num examples = 64", f"step: {step} loss: {9.0:.4f}"]
    return out


def test_result_under_a_banner_is_an_evaluation(tmp_path: Path) -> None:
    path = tmp_path / "train.log"
    path.write_text("\n".join(_train_and_eval(100)) + "\n")
    run = pipeline.load(str(path))
    assert run.n_steps == 100 and run.table["loss"].max() < 3.0  # no eval value read as a training loss
    assert run.evals["step"].to_list() == list(range(10, 101, 10))
    assert run.evals["val_loss"].to_list() == [9.0] * 10
    assert run.meta.duplicate_steps == 0 and run.meta.nonmonotonic_steps == 0


def test_banner_in_a_log_the_fast_path_reads(tmp_path: Path) -> None:
    """Above 20,000 lines the fast path reads the dominant template; a result line of that same
    template under a banner is still an evaluation."""
    lines = []
    for step in range(1, 25_001):
        lines.append(f"step: {step} loss: {3.0 - 1e-4 * step:.4f} lr: 0.001")
        if step % 1000 == 0:
            lines += ["***** Running Evaluation *****", f"step: {step} loss: 9.0000 lr: 0.001"]
    path = tmp_path / "big.log"
    path.write_text("\n".join(lines) + "\n")
    run = pipeline.load(str(path))
    assert run.n_steps == 25_000 and run.table["loss"].max() < 3.0
    assert run.evals["step"].to_list() == list(range(1000, 25_001, 1000))


def test_banner_far_from_any_metric_marks_nothing(tmp_path: Path) -> None:
    lines = [f"step: {s} loss: {3.0 - 0.01 * s:.4f}" for s in range(1, 31)]
    lines[5:5] = ["Evaluating...", *["(no result printed)"] * 25]
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    run = pipeline.load(str(path))
    assert run.n_steps == 30 and run.evals.height == 0


@pytest.mark.reallogs
def test_real_eval_only_log_is_read_as_evaluations(reallogs_dir: Path) -> None:
    """DeepSpeedExamples run_clm_no_trainer: every ``'step':N, 'ppl': P`` line follows a ``*****
    Evaluating perplexity *****`` banner, and the log has no training loss: the run's curve is the
    evaluation's, ln(ppl), and the report says so."""
    path = reallogs_dir / "deepspeed_randomltd_gpt2_seqlen_schedule.log"
    lines = path.read_text().splitlines()
    banner = [i for i, ln in enumerate(lines) if ln.startswith("***** Evaluating perplexity")]
    raw = {}
    for i in banner:
        if i + 1 < len(lines) and lines[i + 1].startswith("'step':"):
            step, ppl = lines[i + 1].split(",")[:2]
            raw[int(step.split(":")[1])] = math.log(float(ppl.split(":")[1]))
    run = pipeline.load(str(path))
    assert len(raw) == run.n_steps == 107
    assert dict(zip(run.table["step"].to_list(), run.table["loss"].to_list(), strict=True)) == pytest.approx(raw)
    assert any("no training loss" in n and "eval `ppl`" in n for n in run.meta.notes)
    assert any("evaluation banner" in n for n in run.meta.notes)
