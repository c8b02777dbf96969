"""Real logs holding appended fresh runs: each run analysed on its own (../shared/reallogs).

Run starts come from the hand-written structure truths (tests/reallogs_truth/*.json notes), not
from logdoctor's output; what each run must find was read from the log's own lines.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from logdoctor.model import Report
from tests.reports import report_of

pytestmark = pytest.mark.reallogs

NMT = "nmt_sign_translator_appended_restarts.txt"
#: First line of each of the 22 runs: line 1, then the 21 restart lines the truth's notes list.
NMT_STARTS = [1, 4, 6, 102, 105, 108, 182, 190, 206, 209, 213, 221, 250, 281, 310, 326, 330, 348, 409, 415, 427, 456]


@cache
def _report(folder: Path, name: str) -> Report:
    return report_of(folder / name)


def test_nmt_every_appended_run_is_its_own(reallogs_dir: Path) -> None:
    """22 runs at the lines the truth names; the report and ``run_status`` are the last run's (ok),
    the file's ``status`` covers runs 20-21, which diverged (error)."""
    report = _report(reallogs_dir, NMT)
    assert [p.first_line for p in report.runs] == NMT_STARTS
    assert [p.last_line for p in report.runs[:-1]] == [s - 1 for s in NMT_STARTS[1:]]
    assert report.runs[-1].current and report.runs[-1].last_line == 484 and report.run_status == "ok"
    assert report.status == "error"
    assert sum(p.rows for p in report.runs) == 427  # every "avg. loss" line in exactly one run


def test_nmt_long_runs_dev_perplexity_rise_is_reported_under_its_run(reallogs_dir: Path) -> None:
    """Run 6 (lines 108-181): dev ppl 2.35M at its 4th validation climbs to 2.73M by the 24th while
    the training loss stays ~235: reported under run 6, as an eval-loss rise (not overfitting)."""
    run6 = _report(reallogs_dir, NMT).runs[5]
    assert (run6.first_line, run6.last_line) == (108, 181)
    (rise,) = run6.findings
    assert rise.code == "LD412" and rise.evidence["metric"] == "dev_ppl" and rise.evidence["evals"] == 24
    assert 0.14 < float(rise.evidence["rise_rel"]) < 0.18


def test_nmt_problems_only_where_the_log_shows_them(reallogs_dir: Path) -> None:
    """Runs 20 (loss 0.54 -> 1.19 at its 7th row, then ~0.9) and 21 (0.46 -> 1.2) diverge; no other
    run has a problem (a fresh run's first loss is never a divergence), except run 12, whose both
    validation lines print ``dev. ppl inf`` (file lines 235 and 243: LD009)."""
    report = _report(reallogs_dir, NMT)
    bad = {p.index: sorted({f.code for f in p.findings}) for p in report.runs if p.findings}
    assert bad == {6: ["LD412"], 12: ["LD009"], 20: ["LD002"], 21: ["LD002"]}


@pytest.mark.reallogs
def test_ld010_of_the_oom_run(reallogs_dir: Path) -> None:
    report = _report(reallogs_dir, "wav2vec2_xlsr_tr_clean_gbl_true_oom_restart_stdout.txt")
    # three launches stopped by Ctrl-C before a step, then the one that trained and crashed
    crashed = [p for p in report.earlier_runs if p.rows]
    assert [p.rows for p in report.earlier_runs[:3]] == [0, 0, 0] and len(crashed) == 1
    assert [(f.code, f.line, f.severity.label) for f in crashed[0].findings] == [("LD010", 294, "error")]


@pytest.mark.parametrize(
    ("name", "runs", "earlier_with_problems"),
    [
        # four Keras models trained one after another, each a healthy run (their progress-bar
        # running means read back per interval, structure/runmean.py): no false alarm in any
        ("keras_stdout_belgian_traffic_4models_50ep.txt", 4, set()),
        # three launches stopped by Ctrl-C before their first step, a run killed by OOM, then started
        # again: the killed run's one finding is how it ended (LD010: torch.cuda.OutOfMemoryError at
        # file line 294; test_ld010_of_the_oom_run)
        ("wav2vec2_xlsr_tr_clean_gbl_true_oom_restart_stdout.txt", 5, {4}),
    ],
)
def test_other_real_logs_with_appended_runs(
    reallogs_dir: Path, name: str, runs: int, earlier_with_problems: set[int]
) -> None:
    report = _report(reallogs_dir, name)
    assert len(report.runs) == runs
    assert {p.index for p in report.earlier_runs if p.findings} == earlier_with_problems


@pytest.mark.parametrize(
    "name",
    [
        "marian_encs_bt_multi_resume.log",  # resumed from checkpoints, the counter never back to the start
        "olmo_1b_continue_from_ckpt.log",  # an explicit checkpoint load
        "llamafactory_trainer_log_resume_dupwriters.jsonl",  # a resume written by two writers
    ],
)
def test_checkpoint_resumes_stay_one_run(reallogs_dir: Path, name: str) -> None:
    """Must not: a resume from a checkpoint continues the same run; nothing is split off."""
    report = _report(reallogs_dir, name)
    assert report.runs == () and report.run.earlier == ()
