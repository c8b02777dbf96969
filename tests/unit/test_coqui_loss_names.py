"""Coqui TTS trainer logs: the total loss where the log names one, else a refusal naming the --map."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.ingest.aliases import FieldMap

EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "excerpts"
# tests/data/excerpts/coqui_xtts_trainer_steps.txt: the first 5 step blocks and the evaluation of
# FineTuning/NewLanguage/Logs/Logs Training.md in Wubpooz/Malta-TTS (commit
# 3136538dd84ee4035134c81e6c96a4ac141d24e8; no licence file found in the indexed snapshot: kept
# as a short format sample only), a Coqui trainer (XTTS GPT fine-tune) console log.
XTTS = EXCERPTS / "coqui_xtts_trainer_steps.txt"


def test_real_xtts_blocks_read_loss_global_step_and_epoch_position() -> None:
    text = XTTS.read_text()
    steps = [int(s) for s in re.findall(r"GLOBAL_STEP: (\d+)", text)]
    losses = [float(v) for v in re.findall(r"\| > loss: ([\d.]+) ", text)]  # current, not the running mean
    run = pipeline.load(str(XTTS))
    assert run.table["step"].to_list() == steps == [0, 200, 400, 600, 800]
    assert run.table["loss"].to_list() == losses
    assert run.meta.steps_per_epoch == 3984  # ``STEP: i/3984`` is the position in the epoch
    assert not any("names no field 'loss'" in n for n in run.meta.notes)


def _vits(total: str | None, first_global: int = 1000001, n: int = 24) -> str:
    lines = [" > EPOCH: 0/1000", " > TRAINING (2023-01-01 10:00:00) "]
    for i in range(n):
        lines += [
            f"   --> STEP: {i}/36 -- GLOBAL_STEP: {first_global + i}",
            f"     | > loss_disc: {2.5 - i * 0.01:.5f}  ({2.5 - i * 0.005:.5f})",
            f"     | > loss_0: {2.5 - i * 0.01:.5f}  ({2.5 - i * 0.005:.5f})",
            f"     | > loss_gen: {2.1 + i * 0.001:.5f}  (2.1)",
            f"     | > loss_mel: {20 - i * 0.1:.5f}  ({20 - i * 0.05:.5f})",
            f"     | > {total or 'loss_1'}: {28.5 - i * 0.1:.5f}  ({28.5 - i * 0.05:.5f})",
            "     | > current_lr_0: 0.0002 ",
            "",
        ]
    return "\n".join(lines) + "\n"


def test_no_total_loss_reads_the_generators_objective_and_names_the_others(tmp_path: Path) -> None:
    path = tmp_path / "trainer_0_log.txt"
    path.write_text(_vits(None))
    run = pipeline.load(str(path))  # loss_1: the generator's optimizer total (loss_0: the discriminator's)
    assert run.table["loss"][0] == pytest.approx(28.5)
    note = next(n for n in run.meta.notes if "main part" in n)
    assert "`loss_1`" in note and all(f"`{f}`" in note for f in ("loss_0", "loss_disc", "loss_gen", "loss_mel"))
    proc = subprocess.run(
        [sys.executable, "-m", "logdoctor", "check", str(path)], capture_output=True, text=True, check=False
    )
    assert proc.returncode != 2 and "Traceback" not in proc.stderr
    run = pipeline.load(str(path), fields=FieldMap.parse(["loss=loss_0"]))  # --map still chooses
    assert run.table["loss"][0] == pytest.approx(2.5) and not any("main part" in n for n in run.meta.notes)


def test_a_named_total_loss_is_read_and_said(tmp_path: Path) -> None:
    path = tmp_path / "trainer_0_log.txt"
    path.write_text(_vits("avg_loss"))
    run = pipeline.load(str(path))
    assert run.table["loss"].to_list()[:2] == [28.5, 28.4]
    assert any("its total loss `avg_loss` is read as the training loss" in n for n in run.meta.notes)


def test_a_global_step_beyond_the_epochs_planned_claims_no_plan(tmp_path: Path) -> None:
    path = tmp_path / "trainer_0_log.txt"
    path.write_text(_vits("avg_loss"))
    st = pipeline.load(str(path)).meta.structure
    assert st is not None and st.planned is None and st.finished is None
    path.write_text(_vits("avg_loss", first_global=0))
    st = pipeline.load(str(path)).meta.structure
    assert st is not None and st.planned == 36000


def test_real_xtts_eval_performance_block_is_an_eval() -> None:
    text = XTTS.read_text()
    want = float(re.findall(r"\| > avg_loss: ([\d.]+)", text)[-1])
    run = pipeline.load(str(XTTS))
    assert run.evals.height == 1 and run.evals["avg_loss"].to_list() == [want]
    assert run.evals["step"].to_list() == [800]  # the training row before the block


def test_a_date_time_in_a_message_is_no_value() -> None:
    run = pipeline.load(str(XTTS))  # ``--> TIME: 2025-08-19 14:22:56 -- STEP: 0/3984 -- GLOBAL_STEP: 0``
    assert "time" not in run.table.columns
