"""Real logs (../shared/reallogs): the epoch count the verdict's evidence gives is the one the
report's header gives (the run structure's), and the structure holds what the logs say."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.renderers.jsonreport import report_dict
from tests.reports import report_of

pytestmark = pytest.mark.reallogs


def _logs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name not in ("MANIFEST.tsv", "README.md"))


def test_evidence_epochs_agree_with_the_header(reallogs_dir: Path) -> None:
    checked = 0
    for path in _logs(reallogs_dir):
        doc = report_dict(report_of(path))
        evidence = doc["verdict"]["evidence"]
        if "epochs" not in evidence:
            continue
        checked += 1
        assert evidence["epochs"] == doc["structure"]["epochs"], path.name
    assert checked >= 30


# file -> (epochs, steps per epoch) read from the log: Sockeye's 204 epochs of ~1,125 updates
# (E=0..203, checkpoint 1 at update 4000 is in epoch 3), fairseq HuBERT's "epoch N @ U updates"
# checkpoint lines (522, 1045, 1567, ...), the word LM's "/ 2983 batches", Keras "Epoch N/50"
# headers over 285-batch epochs, HF console dicts (Total optimization steps 8760 / Num Epochs 10).
EPOCHS = {
    "sockeye3_signwriting_train_original.log": (204, 1125.5),
    "fairseq_hydra_hubert_pretrain.log": (96, 523),
    "pytorch_wordlm_rnntanh_diverged.md": (12, 2983),
    "keras_stdout_belgian_traffic_4models_50ep.txt": (50, 285),
    "wav2vec2_xlsr_ar_clean_gbl_true_stdout.txt": (8, 876),
    "t5_finetune_per_batch_memorize.log": (20, 388),
}


@pytest.mark.parametrize("name", sorted(EPOCHS))
def test_epochs_and_steps_per_epoch(name: str, reallogs_dir: Path) -> None:
    st = pipeline.load(str(reallogs_dir / name)).meta.structure
    assert st is not None
    epochs, spe = EPOCHS[name]
    assert st.epochs == epochs
    assert st.steps_per_epoch == pytest.approx(spe, rel=0.02)


def test_restarts_read_from_the_logs(reallogs_dir: Path) -> None:
    def restarts(name: str) -> list[tuple[int, str]]:
        st = pipeline.load(str(reallogs_dir / name)).meta.structure
        assert st is not None
        return [(r.step, r.kind) for r in st.restarts]

    # OLMo loads latest-unsharded, then counts from step 1
    assert restarts("olmo_1b_continue_from_ckpt.log") == [(1, "resume_line")]
    # Keras console: a new model three times ("Epoch 1/50" after "Epoch 50/50")
    assert restarts("keras_stdout_belgian_traffic_4models_50ep.txt") == [(1, "appended_run")] * 3
    # HF console: a second "***** Running training *****" after the OOM
    assert restarts("wav2vec2_xlsr_tr_clean_gbl_true_oom_restart_stdout.txt") == [(10, "appended_run")]
    # 21 runs appended to one CS224N-style log
    assert len(restarts("nmt_sign_translator_appended_restarts.txt")) == 21
