"""Judgement on real logs nobody tuned to (issue 29): no false all-clear, no false alarm, each cause once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.cli import main
from logdoctor.renderers import get_renderer

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
    assert [r["index"] for r in doc["runs"] if r["status"] == "error"] == [20, 21]


def test_headline_names_the_worst_earlier_run(reallogs_dir: Path) -> None:
    """Never a bare "OK No problems found" above a file whose earlier run diverged."""
    report = pipeline.analyze(pipeline.load(str(reallogs_dir / NMT)))
    head = get_renderer("text")(width=120).render(report).split("Batching:")[0]
    assert "No problems found" not in head.split("the last run")[0]
    assert "ERROR" in head and "earlier run 20 of 22" in head and "divergence" in head


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
