"""The detectors on public training logs: no false alarms on clean runs, the known anomalies found.

A log that is missing from the folder, does not parse, or parses non-training rows as steps fails
(a regression); only an absent folder skips. Expectations come from ../shared/reallogs/MANIFEST.tsv.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.errors import LogdoctorError
from logdoctor.model import Finding, Report, Severity

pytestmark = pytest.mark.reallogs


def analysed(reallogs_dir: Path, name: str) -> Report:
    path = reallogs_dir / name
    assert path.is_file(), f"{name} is missing from {reallogs_dir}"
    try:
        run = pipeline.load(str(path))
    except LogdoctorError as err:
        pytest.fail(f"{name} does not parse: {err}")
    loss = run.table["loss"].drop_nans().drop_nulls()
    assert not (loss.len() and float(loss.max()) > 1000), (  # type: ignore[arg-type]
        f"{name}: parsed loss reaches {loss.max()}: non-training rows were read as steps"
    )
    return pipeline.analyze(run)


def codes(findings: tuple[Finding, ...], minimum: Severity = Severity.INFO) -> set[str]:
    return {f.code for f in findings if f.severity >= minimum}


def clean(rep: Report) -> None:
    assert not codes(rep.findings) & {"LD001", "LD002", "LD101", "LD102", "LD103", "LD401", "LD403"}
    assert not [f for f in rep.findings if f.code == "LD301" and f.severity >= Severity.WARNING]


def megatron_divergence(rep: Report) -> None:
    (f,) = [f for f in rep.findings if f.code == "LD002"]
    assert f.first_step == 3 and f.evidence["peak_ratio"] > 3


def megatron_spike(rep: Report) -> None:
    assert 30 in {f.first_step for f in rep.findings if f.code == "LD101"}


def all_nan(rep: Report) -> None:
    (f,) = [f for f in rep.findings if f.code == "LD001"]
    assert f.evidence["all_nonfinite"] is True


def flat_plateau(rep: Report) -> None:
    assert "LD402" in codes(rep.findings) and not codes(rep.findings, Severity.WARNING)


def flat_plateau_then_sigterm(rep: Report) -> None:
    # the plateau is information; the only warning is the run's end: torchrun's SIGTERM at step 1,010
    # of its 15,000 planned, a stop from outside before the plan (LD010, re-judged in round 13)
    assert "LD402" in codes(rep.findings) and codes(rep.findings, Severity.WARNING) == {"LD010"}


def resume_jumps(rep: Report) -> None:
    # the detector finds both jumps; the diagnosis attributes them to the resumes LD004 reports
    # a change may span a few rows (1.989 at 1050500, 2.202 at 1051000, 2.817 at 1051500): each
    # jump must lie in the step range of a reported change
    ups = [f for f in rep.findings if f.code == "LD301" and float(f.evidence.get("relative_change") or 0) > 0.2]  # type: ignore[arg-type]
    for at in (1051500, 1122500):
        hit = [f for f in ups if (f.first_step or 0) <= at <= (f.last_step or 0)]
        assert len(hit) == 1 and hit[0].evidence.get("explained_by") == "resumed-run"
    assert {f.first_step for f in rep.findings if f.code == "LD004"} >= {1051000, 1122500}


def noisy_batch_loss(rep: Report) -> None:
    spikes = [f for f in rep.findings if f.code == "LD101"]
    assert 1 <= len(spikes) <= 2 and 711720 in {f.first_step for f in spikes}


def no_nan_false_positive(rep: Report) -> None:
    clean(rep)
    assert rep.series.nonfinite_loss_steps == 0


def lr_anneal_recovery(rep: Report) -> None:
    drops = [f for f in rep.findings if f.code == "LD301" and f.evidence["relative_change"] < -0.3]
    assert drops and "LD001" not in codes(rep.findings)


def grad_norm_alone(rep: Report) -> None:
    (f,) = [f for f in rep.findings if f.code == "LD104"]
    assert f.evidence["max_step"] == 173 and f.evidence["max_value"] > 19000


CASES: dict[str, Callable[[Report], None]] = {
    "llmc_gpt2_124m_main.log": clean,
    "moddednanogpt_muon_record.txt": no_nan_false_positive,
    "buildnanogpt_stdout_nowarmup.out": clean,
    "buildnanogpt_logtxt_2p5epoch.txt": clean,
    "lightning_metrics_slm_wikitext103_v0.csv": clean,
    "hf_trainer_state_star_multihead_acc.json": clean,
    "megatron_ds_bigscience_gpt2_perf_n16_dsoff.out": megatron_divergence,
    "megatron_bigscience_gpt2_n8_tp4_pp8.out": megatron_spike,
    "pytorch_wordlm_rnnrelu_all_nan.md": all_nan,
    "pytorch_wordlm_rnntanh_diverged.md": lr_anneal_recovery,
    "olmo_1b_continue_from_ckpt.log": flat_plateau_then_sigterm,
    "llamafactory_trainer_log_luojiu7b_cpt.jsonl": flat_plateau,
    "llamafactory_trainer_log_360_pairwise_acc.jsonl": lambda rep: "LD401" not in codes(rep.findings),
    "marian_encs_bt_multi_resume.log": resume_jumps,
    "joeynmt_signwriting_multilingual_train.log": noisy_batch_loss,
    "msswift_gemma4_sft_stdout_tqdm_dicts.log": grad_norm_alone,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_real_log(reallogs_dir: Path, name: str) -> None:
    CASES[name](analysed(reallogs_dir, name))
