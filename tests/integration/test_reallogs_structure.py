"""Every real log in ../shared/reallogs parses to the run structure a person read from it.

The truth files in tests/reallogs_truth/ were written by reading each raw log (head, tail, grep),
never from logdoctor's output; their ``notes`` say how each fact was counted.
"""

from __future__ import annotations

import csv
import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from logdoctor import pipeline
from logdoctor.renderers.jsonreport import report_dict

pytestmark = pytest.mark.reallogs

TRUTH = Path(__file__).resolve().parent.parent / "reallogs_truth"
REALLOGS = Path(__file__).resolve().parent.parent.parent.parent / "shared" / "reallogs"
EXACT = ("rows", "first_step", "last_step", "stride", "planned")
REL_TOL = 0.02  # epochs and steps per epoch: within 2%
TRUTH_KEYS = {"rows", "first_step", "last_step", "stride", "planned", "epochs", "steps_per_epoch",
              "restarts", "metrics", "not_metrics", "notes"}


def _manifest_files() -> list[str]:
    if not (REALLOGS / "MANIFEST.tsv").is_file():
        return []
    with (REALLOGS / "MANIFEST.tsv").open(newline="") as fh:
        return sorted(row["file"] for row in csv.DictReader(fh, delimiter="\t"))


@cache
def _report(name: str) -> dict[str, Any]:
    run = pipeline.load(str(REALLOGS / name))
    return report_dict(pipeline.analyze(run))


def _truth(name: str) -> dict[str, Any]:
    path = TRUTH / f"{name}.json"
    assert path.is_file(), f"no hand-checked structure truth for {name}: write {path.relative_to(TRUTH.parent)}"
    truth: dict[str, Any] = json.loads(path.read_text())
    assert set(truth) == TRUTH_KEYS, f"{path.name}: keys {sorted(set(truth) ^ TRUTH_KEYS)} wrong"
    return truth


def _close(got: float | None, want: float | None) -> bool:
    if want is None or got is None:
        return got is None and want is None
    return math.isclose(float(got), float(want), rel_tol=REL_TOL)


def _mismatches(got: dict[str, Any], truth: dict[str, Any]) -> list[str]:
    wrong = [f"{k}: got {got.get(k)!r}, truth {truth[k]!r}" for k in EXACT if got.get(k) != truth[k]]
    wrong += [f"{k}: got {got.get(k)!r}, truth {truth[k]!r} (2%)" for k in ("epochs", "steps_per_epoch")
              if not _close(got.get(k), truth[k])]
    restarts = [r["step"] for r in got.get("restarts", [])]
    if restarts != truth["restarts"]:
        wrong.append(f"restarts: got {restarts}, truth {truth['restarts']}")
    metrics = set(got.get("metrics", []))
    if missing := [m for m in truth["metrics"] if m not in metrics]:
        wrong.append(f"metrics missing {missing} (got {sorted(metrics)})")
    if forbidden := [m for m in truth["not_metrics"] if m in metrics]:
        wrong.append(f"not_metrics present {forbidden}")
    return wrong


def test_truth_folder_matches_manifest(reallogs_dir: Path) -> None:
    names = set(_manifest_files())
    extra = {p.name.removesuffix(".json") for p in TRUTH.glob("*.json")} - names
    assert not extra, f"truth files for logs not in the manifest: {sorted(extra)}"


@pytest.mark.parametrize("name", _manifest_files() or ["<no reallogs>"])
def test_real_log_structure_matches_truth(name: str, reallogs_dir: Path) -> None:
    truth = _truth(name)
    report = _report(name)
    if "structure" not in report:
        pytest.skip("structure stage not merged: the JSON report has no 'structure' key")
    wrong = _mismatches(report["structure"], truth)
    assert not wrong, f"{name}: " + "; ".join(wrong)
