"""Issue 15 on the public logs: health-first reports, the failures people hit, no self-contradiction."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import Report

pytestmark = pytest.mark.reallogs


def report(reallogs_dir: Path, name: str) -> Report:
    path = reallogs_dir / name
    if not path.is_file():
        pytest.skip(f"{name} not present")
    return pipeline.analyze(pipeline.load(str(path)))


@pytest.mark.parametrize(
    ("name", "metric", "best_step"),
    [
        ("hf_trainer_state_whisper_ja_5k.json", "eval_loss", 1000),
        ("keras_stdout_leaf_1000ep_overfit.txt", "val_loss", 1),
        ("llamafactory_trainer_log_qwen7b_medical_overfit.jsonl", "eval_loss", 4500),
    ],
)
def test_overfitting_found_with_best_checkpoint(reallogs_dir: Path, name: str, metric: str, best_step: int) -> None:
    rep = report(reallogs_dir, name)
    found = [f for f in rep.findings if f.code == "LD410"]
    assert len(found) == 1
    assert found[0].rule == "overfitting" and found[0].severity.label == "warning"
    assert found[0].evidence["metric"] == metric
    assert found[0].evidence["best_step"] == best_step
    assert f"step {best_step:,}" in found[0].hint


@pytest.mark.parametrize(
    "name",
    [
        "buildnanogpt_logtxt_2p5epoch.txt",
        "lightning_metrics_slm_wikitext103_v0.csv",
        "fairseq_iwslt14_baseline_train.log",
        "moddednanogpt_muon_record.txt",
        "nanogpt_seis_train_mix.log",
        "hf_trl_sft_trainer_state_tinyllama_num_tokens.json",
        "megatron_ds_gpt3_125m_consumed_tokens.log",
        "opennmt_py_id_bima_train.log",
        "keras_csvlogger_brats_unet.log",
    ],
)
def test_no_overfitting_on_improving_eval(reallogs_dir: Path, name: str) -> None:
    rep = report(reallogs_dir, name)
    assert rep.run.evals.height > 0  # the eval series is read, as its own table
    assert not [f for f in rep.findings if f.code == "LD410"]


@pytest.mark.parametrize(
    ("name", "column"),
    [
        ("keras_stdout_leaf_1000ep_overfit.txt", "val_loss"),
        ("buildnanogpt_logtxt_2p5epoch.txt", "val_loss"),
        ("pytorch_wordlm_rnntanh_diverged.md", "valid_loss"),
        ("hf_trainer_state_whisper_ja_5k.json", "eval_loss"),
        ("nanogpt_seis_train_mix.log", "val"),
    ],
)
def test_eval_values_are_their_own_series(reallogs_dir: Path, name: str, column: str) -> None:
    rep = report(reallogs_dir, name)
    ev = rep.run.evals
    assert column in ev.columns and column not in rep.run.table.columns
    assert ev["step"].null_count() == 0  # every eval row placed at a training step
    assert ev["step"].dtype.is_integer()
