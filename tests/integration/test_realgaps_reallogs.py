"""Gaps seen on the public logs: DeepSpeed fp16 overflow lines, memorisation against a flat eval score."""

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
    assert mp.severity.label == "info" and mp.evidence["skipped_in_calibration"] == 9
