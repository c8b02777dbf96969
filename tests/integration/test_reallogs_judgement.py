"""Judgement on real logs nobody tuned to (issue 29): no false all-clear, no false alarm, each cause once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import codes, pipeline
from logdoctor.cli import main
from logdoctor.diagnosis.attribution import attribute
from logdoctor.diagnosis.facts import gather
from logdoctor.model import Severity
from logdoctor.renderers import get_renderer
from tests.reports import report_of

pytestmark = pytest.mark.reallogs

NMT = "nmt_sign_translator_appended_restarts.txt"


def test_appended_log_whose_earlier_runs_diverged_fails_check(reallogs_dir: Path, tmp_path: Path) -> None:
    """Runs 20-21 of the NMT log diverged (LD002 each): the file is `error`, `check --fail-on error`
    exits 1 (it exited 0), `--runs last` gates on the clean last run only, and JSON gives both."""
    path = str(reallogs_dir / NMT)
    assert main(["check", path, "-q", "--fail-on", "error"]) == 1
    assert main(["check", path, "-q", "--fail-on", "error", "--runs", "last"]) == 0
    out = tmp_path / "r.json"
    assert main(["analyze", path, "-f", "json", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert (doc["status"], doc["run_status"]) == ("error", "ok")
    # runs 20-21 diverged (LD002); run 12 printed "validation: iter 1, dev. ppl inf" twice (LD009)
    errors = {r["index"]: {f["code"] for f in r["findings"]} for r in doc["runs"] if r["status"] == "error"}
    assert errors == {12: {"LD009"}, 20: {"LD002"}, 21: {"LD002"}}


def test_headline_names_the_worst_earlier_run(reallogs_dir: Path) -> None:
    """Never a bare "OK No problems found" above a file whose earlier run diverged."""
    report = report_of(reallogs_dir / NMT)
    text = get_renderer("text")(width=120).render(report)
    head = text.split("Batching:")[0]
    assert "No problems found" not in head.split("the last run")[0]
    # the first of the worst, in one line (code, rule, where); its message once, under Earlier runs
    assert "ERROR" in head and "earlier run 12 of 22" in head and "LD009 nonfinite-eval" in head
    assert "dev_ppl" not in head and "Every dev_ppl of this run (2 evaluations) is inf" in " ".join(text.split())


def test_pairwise_reward_loss_stuck_at_ln2_is_a_warning_and_no_other_real_log_is(reallogs_dir: Path) -> None:
    """llamafactory 360 pairwise: loss median 0.69 = ln 2 for all 202 steps (LD421); must not: no
    other real log (healthy or failing some other way) sits at chance."""
    from logdoctor.detectors.chance import ChanceLossDetector

    hits = []
    for path in sorted(reallogs_dir.iterdir()):
        if path.name in ("MANIFEST.tsv", "README.md"):
            continue
        run = pipeline.load(str(path))
        if ChanceLossDetector().analyze(run).findings:
            hits.append(path.name)
    assert hits == ["llamafactory_trainer_log_360_pairwise_acc.jsonl"]


def _healthy_by_manifest(folder: Path) -> list[str]:
    """Logs whose MANIFEST truth says no anomaly ("none..." or "no loss anomalies", written before
    any of this analysis; "No learning" is a failure and is not among them)."""
    import csv

    with (folder / "MANIFEST.tsv").open() as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return [r["file"] for r in rows if r["known_anomalies"].lower().startswith(("none", "no loss anomalies"))]


def test_healthy_real_runs_get_no_warning_or_error(reallogs_dir: Path) -> None:
    """Silence on healthy runs: every log the manifest calls healthy is `ok` (deepspeed_randomltd's
    transient rise while its seq_len ramps was a WARNING)."""
    names = _healthy_by_manifest(reallogs_dir)
    assert len(names) >= 17
    loud = {}
    for name in names:
        report = report_of(reallogs_dir / name)
        if report.status != "ok":
            loud[name] = [f"{f.code} {f.message[:80]}" for f in report.problems]
    assert not loud


def test_epoch_period_under_memorisation_is_not_a_data_order_warning(reallogs_dir: Path) -> None:
    """llamafactory resume_dupwriters: a shuffled 7-epoch SFT whose loss steps down every epoch
    (memorisation); a period of one epoch is that staircase (info), not a WARNING whose hint points
    at data order; and its resume is no "loss problem". LD201 no longer reports the period itself
    (7 cycles at the low end of the spectrum: p = 0.04 against its calibrated null, 3e-4 before), so
    the staircase rule is fed the period it would report."""
    path = reallogs_dir / "llamafactory_trainer_log_resume_dupwriters.jsonl"
    report = report_of(path)
    period = [f for f in report.findings if f.code == "LD201"]
    assert all(f.evidence.get("explained_by") == "epoch-staircase" for f in period)
    run = pipeline.load(str(path))
    found = codes.finding("LD201", "period", evidence={"period": 961.56}, severity=Severity.WARNING)
    (out,) = attribute([found], report.verdict, gather(run, []))
    assert out.severity is Severity.INFO and out.evidence["explained_by"] == "epoch-staircase"
    assert "loss problem" not in report.verdict.summary
    text = get_renderer("text")(width=120).render(report)
    assert "Batching: no batching fault; the loss shows a resume" in text and "not the cause" not in text


def test_memorisation_from_accuracy(reallogs_dir: Path) -> None:
    """OpenNMT id-bima (manifest: overfitting/saturation on tiny data): train accuracy 98.6 while the
    validation accuracy stays flat at 80.2 - 14x fewer errors on the training data. The loss fell
    less than 5-fold over that stretch, so only the accuracy shows it."""
    report = report_of(reallogs_dir / "opennmt_py_id_bima_train.log")
    (found,) = [f for f in report.findings if f.code == "LD411"]
    assert found.evidence["basis"] == "accuracy" and found.severity.label == "warning"
    assert found.evidence["metric"] == "validation_accuracy" and float(found.evidence["error_ratio"]) >= 10
