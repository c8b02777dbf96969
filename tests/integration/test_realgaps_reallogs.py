"""Gaps seen on the public logs: DeepSpeed fp16 overflow lines, memorisation against a flat eval score."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import Report
from tests.reports import report_of

pytestmark = pytest.mark.reallogs


def report(reallogs_dir: Path, name: str) -> Report:
    path = reallogs_dir / name
    if not path.is_file():
        pytest.skip(f"{name} not present")
    return report_of(path)


def test_deepspeed_overflow_lines_are_skipped_steps_split_at_calibration(reallogs_dir: Path) -> None:
    rep = report(reallogs_dir, "deepspeed_chat_rlhf_step3_fp16_overflow.log")
    (cal,) = [f for f in rep.findings if f.code == "LD023"]
    (late,) = [f for f in rep.findings if f.code == "LD024"]
    # 14 overflow lines: 12 while the two scalers calibrate 65536 -> 1024 (steps 0-96), the last
    # pair (log lines 930/935) after a scale had grown back to 8192
    assert cal.evidence["skipped_in_calibration"] == 12 and cal.evidence["scalers"] == 2
    assert (cal.first_step, cal.last_step) == (0, 96)
    assert cal.evidence["initial_scale"] == 65536 and cal.evidence["calibrated_scale"] == 1024
    assert late.evidence["skipped_after_calibration"] == 2 and (late.first_step, late.last_step) == (211, 212)
    assert cal.severity.label == "info" and late.severity.label == "info"  # a handful, within the null


def test_fairseq_overflow_notes_stay_within_the_probing_null(reallogs_dir: Path) -> None:
    rep = report(reallogs_dir, "fairseq_hydra_hubert_pretrain.log")
    fp16 = [f for f in rep.findings if f.code in ("LD023", "LD024")]
    assert sum(int(f.evidence.get("skipped_in_calibration", 0)) for f in fp16) == 2
    assert sum(int(f.evidence.get("skipped_after_calibration", 0)) for f in fp16) == 80  # 82 lines in all
    assert all(f.severity.label == "info" for f in fp16)


def test_megatron_calibration_skips_are_information(reallogs_dir: Path) -> None:
    rep = report(reallogs_dir, "megatron_bigscience_gpt2_n8_tp4_pp8.out")
    (mp,) = [f for f in rep.findings if f.code == "LD020"]
    # 10 + 8 + 1 = 19 skipped at iterations 10, 20 and 30 (the iteration-10 line has no lm loss: it
    # counts since issue 28), all while the scale calibrated down
    assert mp.severity.label == "info" and mp.evidence["skipped_in_calibration"] == 19


#: Real logs with an eval score (or WER/perplexity) whose direction is known, none memorising.
SCORED = (
    "buildnanogpt_logtxt_2p5epoch.txt", "fairseq_hydra_hubert_pretrain.log", "fairseq_iwslt14_baseline_train.log",
    "hf_trl_sft_trainer_state_tinyllama_num_tokens.json", "joeynmt_signwriting_multilingual_train.log",
    "keras_csvlogger_brats_unet.log", "keras_stdout_belgian_traffic_4models_50ep.txt",
    "keras_stdout_leaf_1000ep_overfit.txt", "lightning_metrics_slm_wikitext103_v0.csv",
    "marian_encs_bt_multi_resume.log", "msswift_sft_logging.jsonl", "msswift_logging_dup_lines.jsonl",
    "nmt_sign_translator_appended_restarts.txt",  # opennmt_py_id_bima memorises (issue 29): test_reallogs_judgement
    "pytorch_wordlm_rnntanh_diverged.md", "sockeye3_signwriting_train_original.log",
    "megatron_bigscience_gpt2_n8_tp4_pp8.out", "megatron_ds_gpt3_125m_consumed_tokens.log",
)  # fmt: skip


@pytest.mark.parametrize(
    ("name", "metric", "plateau", "min_fold"),
    [
        # BLEU flat from epoch 4 (33-34) while the batch loss falls to 5e-4; 8 BLEU columns agree
        ("t5_finetune_per_batch_memorize.log", "bleu", 1552, 100.0),
        # WER 0.748 -> 0.745 from step 2000 while the train loss falls 0.0009 -> 0.0001 (LD410 also fires)
        ("hf_trainer_state_whisper_ja_5k.json", "eval_wer", 2000, 5.0),
    ],
)
def test_memorisation_found(reallogs_dir: Path, name: str, metric: str, plateau: int, min_fold: float) -> None:
    rep = report(reallogs_dir, name)
    (found,) = [f for f in rep.findings if f.code == "LD411"]
    assert metric in str(found.evidence["metric"]) and found.evidence["plateau_step"] == plateau
    assert float(found.evidence["train_fold"]) >= min_fold and found.severity.label == "warning"


@pytest.mark.parametrize("name", SCORED)
def test_scored_real_runs_are_not_memorising(reallogs_dir: Path, name: str) -> None:
    rep = report(reallogs_dir, name)
    assert not [f for f in rep.findings if f.code == "LD411"]


def test_the_stated_null_flat_score_stretches_of_real_runs_fall_under_2_fold(reallogs_dir: Path) -> None:
    from logdoctor.detectors.memorization import MemorizationDetector

    folds = []
    for name in SCORED:
        run = pipeline.load(str(reallogs_dir / name))
        folds += [float(f.evidence["train_fold"]) for f in MemorizationDetector(min_fold=1.0).analyze(run).findings]
    assert folds and max(folds) < 2.0  # 1.82 (OpenNMT): the default min_fold 5 sits 2.7x above it
