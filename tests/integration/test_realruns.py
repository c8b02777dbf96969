"""The verdict on real training runs (tiny models trained for real: bench/realruns/train.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reports import report_of

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "realruns"
# the batching runs of bench/realruns/train.py (pathology_* runs come from pathologies.py and are
# tested in test_realruns_pathologies.py)
TRUTHS = sorted(p for p in ROOT.glob("*.truth.json") if not p.name.startswith("pathology_"))

#: runs the verdict gets wrong today, with the reason (strict: the test fails once they pass)
#: (loop_static_stats_ga2 was one until logdoctor.emit wrote each micro-batch's fingerprint,
#: ``micro_fp``: the merged ``batch_fp`` of two static micro-batches recomposes every epoch)
KNOWN_MISSES: dict[str, str] = {}


def _verdict(truth_path: Path) -> tuple[dict[str, object], str, str]:
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    log = truth_path.with_name(truth_path.name.replace(".truth.json", ".log"))
    v = report_of(str(log)).verdict
    assert v is not None
    return truth, v.batching, v.summary


def test_the_real_runs_are_there() -> None:
    names = {p.name.removesuffix(".truth.json") for p in TRUTHS}
    assert {"loop_static_stats", "loop_bucketed_stats", "hf_gbl_stats", "hf_default_stats"} <= names


def test_group_by_length_runs_cover_hf_megabatch_sizes() -> None:
    """Issue 31: HF megabatches of 6, 10, 12, 24 and 50 optimizer steps (min(samples // (4 x batch x
    accumulation), 50)), with and without accumulation, with emit statistics and loss-only."""
    have = set()
    for p in TRUTHS:
        t = json.loads(p.read_text(encoding="utf-8"))
        if t["strategy"] == "group_by_length":
            have.add((min(t["samples"] // (4 * t["batch"] * t["accum"]), 50), t["accum"] > 1, t["stats"]))
    want = {(m, ga, stats) for m in (6, 10, 12, 24, 50) for ga in (False, True) for stats in (False, True)}
    assert want <= have, sorted(want - have)


@pytest.mark.parametrize("truth_path", TRUTHS, ids=lambda p: p.name.removesuffix(".truth.json"))
def test_real_run_verdict_matches_its_truth(truth_path: Path, request: pytest.FixtureRequest) -> None:
    name = truth_path.name.removesuffix(".truth.json")
    if name in KNOWN_MISSES:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_MISSES[name], strict=True))
    truth, got, summary = _verdict(truth_path)
    assert got not in truth["must_not"], f"{name}: {summary}"  # type: ignore[operator]
    assert got == truth["expected_verdict"], f"{name}: {summary}"


@pytest.mark.parametrize(
    "truth_path",
    [p for p in TRUTHS if p.name.split(".")[0] in KNOWN_MISSES],
    ids=lambda p: p.name.removesuffix(".truth.json"),
)
def test_known_misses_never_blame_a_healthy_pipeline(truth_path: Path) -> None:
    truth, got, summary = _verdict(truth_path)
    assert got not in truth["must_not"], summary  # type: ignore[operator]
