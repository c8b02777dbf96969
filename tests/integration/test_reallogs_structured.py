"""Real public JSON/JSONL/CSV logs (../shared/reallogs) parse to MANIFEST.tsv's step counts."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.detectors.integrity import IntegrityDetector

pytestmark = pytest.mark.reallogs

# file -> (format, steps, first step, last step); counts from MANIFEST.tsv's n_steps column
EXPECTED = {
    "msswift_sft_logging.jsonl": ("jsonl", 44, 1, 430),
    "msswift_logging_dup_lines.jsonl": ("jsonl", 2956, 1, 14775),
    "hf_trainer_state_star_multihead_acc.json": ("hf_trainer_state", 2000, 20, 40000),
    "hf_trainer_state_whisper_ja_5k.json": ("hf_trainer_state", 200, 25, 5000),
    "llamafactory_trainer_log_luojiu7b_cpt.jsonl": ("jsonl", 1742, 5, 8710),
    "llamafactory_trainer_log_mistral_translator_total_tokens0.jsonl": ("jsonl", 866, 10, 8660),
    "llamafactory_trainer_log_360_pairwise_acc.jsonl": ("jsonl", 202, 1, 202),
    "lightning_metrics_slm_wikitext103_v0.csv": ("csv", 2814, 49, 140699),
    "hf_trl_sft_trainer_state_tinyllama_num_tokens.json": ("hf_trainer_state", 186, 15, 2790),
    "keras_csvlogger_brats_unet.log": ("csv", 24, 0, 23),
    # added 2026-12-01 (counts read from the files: log_history / jsonl records with a loss)
    "llamafactory_codeup_sft_math_trainer_state_gbl_false.json": ("hf_trainer_state", 1666, 10, 16660),
    "hf_trl_trainer_state_mistral7b_medical_gbl_false.json": ("hf_trainer_state", 642, 25, 16050),
    "hf_trainer_state_lyric_lora_diverged.json": ("hf_trainer_state", 3000, 1, 3000),
    "llamafactory_trainer_log_qwen7b_medical_overfit.jsonl": ("jsonl", 675, 10, 6750),
}
#: Structured logs with a resume or duplicate writers: read by their own parser, checked below.
RESUMED = {"llamafactory_trainer_log_resume_dupwriters.jsonl": ("jsonl", 656, 10, 6560)}


def test_manifest_lists_every_expected_file(reallogs_dir: Path) -> None:
    with (reallogs_dir / "MANIFEST.tsv").open() as fh:
        files = {row["file"] for row in csv.DictReader(fh, delimiter="\t")}
    assert set(EXPECTED) <= files


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_log_step_counts_and_sane_values(name: str, reallogs_dir: Path) -> None:
    fmt, n, first, last = EXPECTED[name]
    run = pipeline.load(str(reallogs_dir / name))
    assert run.meta.format == fmt
    assert run.n_steps == n
    assert (int(run.table["step"][0]), int(run.table["step"][-1])) == (first, last)
    loss = run.table["loss"].to_list()
    assert all(math.isfinite(v) and 0 <= v < 100 for v in loss)
    assert run.meta.resumes == 0 and run.meta.nonmonotonic_steps == 0


def test_msswift_duplicates_and_giant_line(reallogs_dir: Path) -> None:
    run = pipeline.load(str(reallogs_dir / "msswift_logging_dup_lines.jsonl"))
    assert run.meta.duplicate_steps == 2955
    assert run.meta.resumes == 0
    assert any("100,000 characters" in k for k in run.meta.skip_reasons)
    assert run.table["grad_norm"][0] == 484.0
    assert run.evals.height == 6


def test_hf_values_epochs_and_evals(reallogs_dir: Path) -> None:
    star = pipeline.load(str(reallogs_dir / "hf_trainer_state_star_multihead_acc.json"))
    assert star.table["loss"][0] == pytest.approx(24.79317626953125)
    assert star.table["lr"][0] == 0.0001 and "train_acc_0" in star.table.columns
    assert (star.meta.total_steps, star.meta.steps_per_epoch) == (252780, 12639)
    whisper = pipeline.load(str(reallogs_dir / "hf_trainer_state_whisper_ja_5k.json"))
    assert whisper.evals.height == 5 and "eval_wer" in whisper.evals.columns
    assert whisper.meta.steps_per_epoch == 131
    tiny = pipeline.load(str(reallogs_dir / "hf_trl_sft_trainer_state_tinyllama_num_tokens.json"))
    assert tiny.table["tokens"][1] == pytest.approx(4096.0)  # cumulative num_tokens -> per step
    assert tiny.table["tokens_cumulative"][-1] == 11424256.0


def test_llamafactory_degenerate_columns(reallogs_dir: Path) -> None:
    run = pipeline.load(str(reallogs_dir / "llamafactory_trainer_log_mistral_translator_total_tokens0.jsonl"))
    assert run.meta.total_steps == 8660
    found = {f.evidence["column"] for f in IntegrityDetector().analyze(run).findings if f.code == "LD007"}
    assert found == {"throughput", "total_tokens"}


def test_lightning_and_keras_evals(reallogs_dir: Path) -> None:
    lt = pipeline.load(str(reallogs_dir / "lightning_metrics_slm_wikitext103_v0.csv"))
    assert lt.table["loss"][0] == pytest.approx(7.628580570220947)
    assert lt.evals["val_loss"].drop_nulls().len() == 10
    assert 14000 <= (lt.meta.steps_per_epoch or 0) <= 14150
    keras = pipeline.load(str(reallogs_dir / "keras_csvlogger_brats_unet.log"))
    assert keras.meta.steps_per_epoch == 1
    assert keras.table["acc"][0] == pytest.approx(0.9847438335418701)
    assert keras.evals.height == 24 and "val_loss" in keras.evals.columns


def test_marian_multi_resume(reallogs_dir: Path) -> None:
    run = pipeline.load(str(reallogs_dir / "marian_encs_bt_multi_resume.log"))
    assert run.n_steps >= 1000, f"the text parser reads only {run.n_steps} Marian steps"
    # Marian's update counter never goes back: the text parser must flag the first step after each
    # "Training started" line in a ``restart`` column (structure.RESTART) for this to hold.
    assert run.meta.resumes >= 1, "Marian restarts not flagged (text parser: emit a 'restart' column)"
    jumps = [f for f in IntegrityDetector().analyze(run).findings if f.code == "LD004"]
    assert any(f.evidence["loss_before"] < 2.1 and f.evidence["loss_after"] > 2.6 for f in jumps)


def test_text_logs_are_left_to_the_text_parser(reallogs_dir: Path) -> None:
    from logdoctor.ingest.parsers import sniff
    from logdoctor.ingest.sources import open_source

    others = [
        p
        for p in reallogs_dir.iterdir()
        if p.name not in EXPECTED and p.name not in RESUMED and p.suffix not in (".tsv", ".md")
    ]
    others += [p for p in reallogs_dir.glob("*.md") if p.name != "README.md"]
    assert len(others) >= 15
    structured = {sniff(open_source(str(p))).name for p in others} - {"text"}
    assert structured == set()


@pytest.mark.parametrize("name", sorted(RESUMED))
def test_resumed_structured_logs_keep_one_record_per_step(name: str, reallogs_dir: Path) -> None:
    fmt, n, first, last = RESUMED[name]
    run = pipeline.load(str(reallogs_dir / name))
    assert run.meta.format == fmt
    assert run.n_steps == n
    assert (int(run.table["step"][0]), int(run.table["step"][-1])) == (first, last)
    assert run.table["step"].is_unique().all()
    # the elapsed_time clock starts again at the resume from checkpoint-5000 (line 1047)
    assert run.meta.resume_steps == (5010,)
