"""Every text-format real log in ../shared/reallogs parses with the manifest's number of steps."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest

from logdoctor import pipeline

#: Files whose format is a text log (JSON, JSONL and CSV files are read by other parsers).
TEXT_LOGS = (
    "buildnanogpt_logtxt_2p5epoch.txt",
    "buildnanogpt_stdout_nowarmup.out",
    "fairseq_hydra_hubert_pretrain.log",
    "fairseq_iwslt14_baseline_train.log",
    "joeynmt_signwriting_multilingual_train.log",
    "llmc_gpt2_124m_main.log",
    "marian_encs_bt_multi_resume.log",
    "megatron_bigscience_gpt2_n8_tp4_pp8.out",
    "megatron_ds_bigscience_gpt2_perf_n16_dsoff.out",
    "megatron_ds_gpt3_125m_consumed_tokens.log",
    "megatron_ds_random_ltd_reserve_length.log",
    "moddednanogpt_muon_record.txt",
    "msswift_gemma4_sft_stdout_tqdm_dicts.log",
    "nanogpt_seis_train_mix.log",
    "olmo_1b_continue_from_ckpt.log",
    "opennmt_py_id_bima_train.log",
    "pytorch_wordlm_rnnrelu_all_nan.md",
    "pytorch_wordlm_rnntanh_diverged.md",
    "sockeye3_signwriting_train_original.log",
    # added 2026-12-01
    "deepspeed_chat_rlhf_step3_fp16_overflow.log",
    "deepspeed_randomltd_gpt2_seqlen_schedule.log",
    "nmt_sign_translator_appended_restarts.txt",
    "t5_finetune_per_batch_memorize.log",
    "wav2vec2_xlsr_ar_aug20gaus_gbl_true_stdout.txt",
    "wav2vec2_xlsr_ar_clean_gbl_true_stdout.txt",
    "wav2vec2_xlsr_tr_clean_gbl_true_oom_restart_stdout.txt",
)
#: Manifest counts that include records without a training loss, by file: the Megatron it-10
#: line has no ``lm loss`` (all 10 iterations skipped for fp16 overflow), so it is no step.
NO_LOSS_RECORDS = {"megatron_bigscience_gpt2_n8_tp4_pp8.out": 1}
#: Runs whose loss may be negative: DeepSpeed-Chat PPO's actor loss (an advantage-weighted ratio).
SIGNED_LOSS = {"deepspeed_chat_rlhf_step3_fp16_overflow.log"}
#: Records that a later run rewrote (the later write of a step wins): attempt 1 of this log dies
#: after 10 records and attempt 2 starts again from its first step.
REWRITTEN = {
    "wav2vec2_xlsr_tr_clean_gbl_true_oom_restart_stdout.txt": 10,
    # 22 runs appended to one file: the last starts at its 401st train line (file line 456)
    "nmt_sign_translator_appended_restarts.txt": 400,
}
#: Row counts read from the log where the manifest counts something else: Sockeye's manifest
#: counts the 57 ``Checkpoint [k]`` summaries; its training rows are the 9,181 per-batch lines
#: (``grep -c "\] E=[0-9]* B="``), and the checkpoint summaries are evaluation records.
ROWS_READ = {"sockeye3_signwriting_train_original.log": 9181}
#: Runs whose manifest says every training loss is nan.
ALL_NAN = {"pytorch_wordlm_rnnrelu_all_nan.md"}


def _manifest(folder: Path) -> dict[str, dict[str, str]]:
    with (folder / "MANIFEST.tsv").open(newline="") as fh:
        return {row["file"]: row for row in csv.DictReader(fh, delimiter="\t")}


def _count(text: str) -> int:
    """The first number in the manifest's n_steps text (``"19,560 steps (every step)"``)."""
    match = re.search(r"\d[\d,]*", text)
    if match is None:
        raise ValueError(f"no count in {text!r}")
    return int(match.group().replace(",", ""))


@pytest.mark.reallogs
@pytest.mark.parametrize("name", TEXT_LOGS)
def test_real_text_log(reallogs_dir: Path, name: str) -> None:
    row = _manifest(reallogs_dir)[name]
    run = pipeline.load(str(reallogs_dir / name))
    assert run.meta.format == "text"
    expected = _count(row["n_steps"]) - NO_LOSS_RECORDS.get(name, 0) - REWRITTEN.get(name, 0)
    expected = ROWS_READ.get(name, expected)
    assert run.n_steps == expected
    loss = run.table["loss"].to_list()
    finite = [v for v in loss if math.isfinite(v)]
    if name in ALL_NAN:
        assert not finite
    else:
        assert len(finite) == len(loss)
        low = -100.0 if name in SIGNED_LOSS else 0.0
        assert all(low <= v < 100.0 for v in finite)
    assert run.table["step"].is_sorted() and run.table["step"].is_unique().all()


@pytest.mark.reallogs
def test_manifest_text_logs_are_all_covered(reallogs_dir: Path) -> None:
    names = set(_manifest(reallogs_dir))
    others = {n for n in names if n.endswith((".json", ".jsonl", ".csv")) or "keras" in n}
    assert names - others == set(TEXT_LOGS)
