"""Issue 15 on the public logs: health-first reports, the failures people hit, no self-contradiction."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.model import Report
from tests.reports import report_of

pytestmark = pytest.mark.reallogs


def report(reallogs_dir: Path, name: str) -> Report:
    path = reallogs_dir / name
    if not path.is_file():
        pytest.skip(f"{name} not present")
    return report_of(path)


@pytest.mark.parametrize(
    ("name", "metric", "best_step"),
    [
        ("hf_trainer_state_whisper_ja_5k.json", "eval_loss", 1000),
        ("keras_stdout_leaf_1000ep_overfit.txt", "val_loss", 2),  # 2 batches per epoch
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


def test_marian_cause_matches_its_resume_finding(reallogs_dir: Path) -> None:
    rep = report(reallogs_dir, "marian_encs_bt_multi_resume.log")
    assert rep.meta.overwritten_steps == 0
    assert "rewrote" not in rep.verdict.cause and "rewrote" not in rep.verdict.summary
    assert rep.verdict.cause == "a resume followed by a loss jump"  # what LD004 found


@pytest.mark.parametrize(
    ("name", "column"),
    [
        ("hf_trl_sft_trainer_state_tinyllama_num_tokens.json", "tokens"),
        ("msswift_gemma4_sft_stdout_tqdm_dicts.log", "tokens"),
        ("megatron_ds_gpt3_125m_consumed_tokens.log", "seqs"),
    ],
)
def test_partial_batch_statistics_are_named(reallogs_dir: Path, name: str, column: str) -> None:
    rep = report(reallogs_dir, name)
    assert rep.run.has(column)
    assert "no per-batch statistics" not in rep.verdict.summary
    assert f"per-batch {column}" in rep.verdict.summary


def test_line_counts_do_not_contradict(reallogs_dir: Path) -> None:
    from logdoctor.renderers.rows import facts

    rep = report(reallogs_dir, "msswift_gemma4_sft_stdout_tqdm_dicts.log")
    m = rep.meta
    assert m.lines_skipped > m.lines_read  # the skip count is over \r-split records
    assert m.records_read >= m.lines_skipped + rep.run.n_steps
    log = dict(facts(rep))["log"]
    assert f"{m.records_read:,} records" in log


def test_tinyllama_has_no_epoch_boundary_jump(reallogs_dir: Path) -> None:
    rep = report(reallogs_dir, "hf_trl_sft_trainer_state_tinyllama_num_tokens.json")
    # the data: epoch 1 ends near 1.10 and epoch 2 starts near 1.10-1.15 (no 8-sigma jump)
    z = rep.verdict.evidence.get("epoch_jump_z")
    assert z is None or abs(float(z)) < 4  # type: ignore[arg-type]
    assert not [f for f in rep.findings if f.code in ("LD202", "LD203")]


@pytest.mark.parametrize(
    "name", ["megatron_ds_bigscience_gpt2_perf_n16_dsoff.out", "hf_trainer_state_lyric_lora_diverged.json"]
)
def test_second_rise_to_the_end_is_not_a_recovery(reallogs_dir: Path, name: str) -> None:
    rep = report(reallogs_dir, name)
    div = [f for f in rep.findings if f.code == "LD002"]
    assert len(div) == 1
    assert div[0].evidence["rises_again"] is True
    assert "rising again" in div[0].message
    assert div[0].last_step == rep.series.last_step


def test_megatron_skipped_iterations_reported_as_what_they_are(reallogs_dir: Path) -> None:
    rep = report(reallogs_dir, "megatron_bigscience_gpt2_n8_tp4_pp8.out")
    mp = [f for f in rep.findings if f.code == "LD020"]
    # 10 at iteration 10 (a line with no lm loss: every batch skipped), 8 at 20, 1 at 30
    assert len(mp) == 1 and mp[0].evidence["skipped_total"] == 19
    assert "loss scale" in mp[0].message


def test_zero_failure_counter_is_good_news(reallogs_dir: Path) -> None:
    rep = report(reallogs_dir, "megatron_ds_bigscience_gpt2_perf_n16_dsoff.out")
    assert not [f for f in rep.findings if f.code == "LD007" and "skipped" in str(f.evidence.get("column"))]
    good = [f for f in rep.findings if f.code == "LD021"]
    assert good and good[0].severity.label == "info"


@pytest.mark.parametrize(
    "name",
    ["llamafactory_trainer_log_mistral_translator_total_tokens0.jsonl", "lightning_metrics_slm_wikitext103_v0.csv"],
)
def test_one_staircase_rule_and_it_is_information(reallogs_dir: Path, name: str) -> None:
    rep = report(reallogs_dir, name)
    stair = [f for f in rep.findings if f.code == "LD203"]
    assert len(stair) == 1 and stair[0].severity.label == "info"
    loose = [f for f in rep.findings if f.code == "LD301" and not f.evidence.get("explained_by")]
    assert not loose  # every level drop at an epoch boundary is a step of the staircase
    assert "problem" not in rep.verdict.summary  # a staircase in a healthy run is information
    assert rep.status == "ok"


@pytest.mark.parametrize("name", ["buildnanogpt_logtxt_2p5epoch.txt", "buildnanogpt_stdout_nowarmup.out"])
def test_clean_build_nanogpt_opens_with_no_problems(reallogs_dir: Path, name: str) -> None:
    from logdoctor.renderers import get_renderer
    from logdoctor.renderers.jsonreport import report_dict

    rep = report(reallogs_dir, name)
    period = [f for f in rep.findings if f.code == "LD201"]
    assert period and period[0].severity.label == "info"  # the 46.6-step cycle is information
    assert report_dict(rep)["status"] == "ok"
    text = get_renderer("text")(color=False, width=80).render(rep)
    assert text.splitlines()[1].startswith("│ OK       No problems found")
    md = get_renderer("markdown")().render(rep)
    assert "- **OK** No problems found" in md
