"""LD003/LD004/LD005/LD007: found where the fault is, silent where it is not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.detectors.integrity import IntegrityDetector
from logdoctor.errors import ConfigError
from logdoctor.ingest.parsers.base import ParseResult
from logdoctor.model import Run
from logdoctor.structure.build import build_run

FORMATS = Path(__file__).resolve().parents[2] / "fixtures" / "formats"


def _codes(path: Path) -> dict[str, list]:
    found: dict[str, list] = {}
    for f in IntegrityDetector().analyze(pipeline.load(str(path))).findings:
        found.setdefault(f.code, []).append(f)
    return found


def _run(steps: list[int], loss: list[float], **cols: list) -> Run:
    data = {"step": steps, "loss": loss, "line_no": list(range(1, len(steps) + 1)), **cols}
    return build_run(ParseResult(table=pl.DataFrame(data)), "x", "jsonl")


def test_resumed_fixture_reports_resume_and_loss_jump() -> None:
    found = _codes(FORMATS / "struct_resumed.jsonl")
    (ld003,) = found["LD003"]
    assert ld003.evidence["resumes"] == 1
    assert ld003.evidence["overwritten_steps"] == 100
    assert ld003.evidence["resume_steps"] == "201"
    (ld004,) = found["LD004"]
    assert ld004.first_step == 201
    assert ld004.evidence["loss_after"] - ld004.evidence["loss_before"] == pytest.approx(0.6, abs=0.1)
    assert ld004.evidence["robust_z"] > 4


def test_resume_without_a_jump_is_info_only() -> None:
    rng = np.random.default_rng(3)
    loss = list(2.0 + rng.normal(0, 0.02, 100))
    steps = [*range(1, 61), *range(41, 81)]
    run = _run(steps, loss)
    codes = [f.code for f in IntegrityDetector().analyze(run).findings]
    assert codes == ["LD003"]


def test_interleaved_fixture_reports_nonmonotonic_not_resume() -> None:
    found = _codes(FORMATS / "struct_interleaved.jsonl")
    assert set(found) == {"LD005"}
    assert found["LD005"][0].evidence["nonmonotonic_steps"] == 100


def test_rank_advice_only_where_several_ranks_are_evidenced() -> None:
    # two writers of every step (the fixture's ranks 0 and 1): the advice names ranks
    (ranks,) = _codes(FORMATS / "struct_interleaved.jsonl")["LD005"]
    assert ranks.hint.startswith("100 of 100 steps were written again") and "log one rank only" in ranks.hint
    # a step written twice among records out of order (short backward jumps: interleaved writers,
    # so the repeat is not merged as one step written twice) in a run of 10 steps: no rank is evidenced
    steps = [1, 2, 2, 4, 3, 5, 4, *range(6, 11)]
    run = _run(steps, [2.0 - 0.01 * i for i in range(len(steps))])
    (one,) = [f for f in IntegrityDetector().analyze(run).findings if f.code == "LD005"]
    assert "rank" not in one.hint


def test_healthy_fixtures_are_silent() -> None:
    for name in ("hf_trainer_state.json", "csv_lightning_metrics.csv", "jsonl_msswift_dup.jsonl"):
        assert _codes(FORMATS / name) == {}, name


def test_degenerate_zero_column_is_reported() -> None:
    run = _run([1, 2, 3, 4], [1.0, 0.9, 0.8, 0.7], total_tokens=[0.0] * 4, lr=[1e-4] * 4)
    findings = IntegrityDetector().analyze(run).findings
    assert [(f.code, f.evidence["column"]) for f in findings] == [("LD007", "total_tokens")]


def test_thresholds_are_validated() -> None:
    with pytest.raises(ConfigError):
        IntegrityDetector(pre_window=1)


def test_two_writers_and_a_flagged_resume_are_counted_apart() -> None:
    """Two writers that each write every step (one lagging once: 3, 4, 3, 4), then a flagged
    restart: LD005 counts the jumps back and the repeats apart and leaves the restart's own jump
    out; LD003 counts the records the restart replaced apart from the writers' repeats."""
    steps = [1, 1, 2, 2, 3, 4, 3, 4, *(s for s in range(5, 11) for _ in (0, 1)), 8, 9, 10, 11, 12]
    loss = [2.0 - 0.01 * i for i in range(len(steps))]  # every record differs: no exact duplicate
    restart = [0.0] * len(steps)
    restart[20] = 1.0  # the resume at step 8
    run = _run(steps, loss, restart=restart)
    found = {f.code: f for f in IntegrityDetector().analyze(run).findings}
    # repeats: 1, 2, 5-10 (8); backward: 4 -> 3 (1); 10 -> 8 is the resume, counted in neither
    assert (run.meta.nonmonotonic_steps, run.meta.repeated_steps) == (9, 8)
    assert "went backwards 1 time(s) and repeated the step just before (other values) 8 time(s)" in (
        found["LD005"].message
    )
    # the resume replaces the 6 records of steps 8-10 before it; steps 1-7's first writes are 7 more
    assert (run.meta.resume_overwritten, run.meta.overwritten_steps) == (6, 13)
    assert "the resume(s) replaced 6 earlier record(s)" in found["LD003"].message
    assert "; 7 more record(s) were replaced by a later, non-identical write" in found["LD003"].message
