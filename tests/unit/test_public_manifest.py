"""bench/realruns/public_manifest.tsv: every public log names where it is and a truth the scorer can read."""

from __future__ import annotations

import re
from pathlib import Path

from bench.realruns import public
from logdoctor.model import BATCHING_LABELS


def test_every_row_names_its_source_and_a_readable_truth() -> None:
    rows = public.rows()
    assert len(rows) >= 20 and len({r["name"] for r in rows}) == len(rows)
    for r in rows:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", r["repo"]) and re.fullmatch(r"[0-9a-f]{40}", r["commit"]), r["name"]
        assert r["path"] and r["sampler_truth"] and r["health_truth"] and r["why"], r["name"]
        labels = set(r["expected_verdict"].split("|"))
        assert labels <= {*BATCHING_LABELS, "none"} and r["expected_health"] in ("ok", "problem", "none"), r["name"]
        assert (labels == {"none"}) == (r["expected_health"] == "none"), r["name"]  # refusals on both or neither
        assert not labels & set(filter(None, r["must_not"].split("|"))), r["name"]


def test_a_refused_file_scores_none_and_a_healthy_run_ok(tmp_path: Path) -> None:
    row = {"name": "x", "expected_verdict": "none", "expected_health": "none", "must_not": ""}
    empty = tmp_path / "x.log"
    empty.write_text("no steps here\n")
    out = public.judge(row, empty)
    assert (out.verdict, out.health, out.verdict_right, out.health_right) == ("none", "none", True, True)
    log = tmp_path / "ok.log"
    log.write_text("".join(f"step {i} loss {2.0 * 0.995**i:.4f}\n" for i in range(1, 301)))
    row = {
        "name": "ok",
        "expected_verdict": "inconclusive|healthy|not_batching",
        "expected_health": "ok",
        "must_not": "sorted|static|grouped",
    }
    out = public.judge(row, log)
    assert out.health == "ok" and out.verdict_right and not out.blamed
