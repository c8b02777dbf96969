"""A length reset inside the first epoch rules out a whole-epoch sort: until a second epoch shows
whether the windows are recomposed, the verdict is undecided (not `sorted` at 99%, which a prefix
of the bundled group_by_length-style example got while it was being written)."""

from __future__ import annotations

from pathlib import Path

from logdoctor import pipeline

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _prefix(src: Path, lines: int, dest: Path) -> Path:
    dest.write_text("".join(src.read_text().splitlines(keepends=True)[:lines]))
    return dest


def test_a_reset_inside_the_first_epoch_leaves_the_windows_undecided(tmp_path: Path) -> None:
    report = pipeline.analyze(pipeline.load(str(_prefix(FIXTURES / "example.log", 130, tmp_path / "p.log"))))
    v = report.verdict
    assert v.batching == "inconclusive" and v.confidence is None, v.summary
    assert v.evidence["reset_inside_epoch"] == 78 and "inside the first 197-step epoch" in v.summary
    codes = {f.code: f for f in report.findings}
    assert "LD501" not in codes
    # the level change and accuracy drop at the reset are its symptoms, said once
    assert codes["LD301"].severity.label == "info" and codes["LD401"].severity.label == "info"


def test_the_whole_example_is_still_grouped() -> None:
    assert pipeline.analyze(pipeline.load(str(FIXTURES / "example.log"))).verdict.batching == "grouped"


def test_a_whole_epoch_sort_seen_past_its_first_epoch_stays_sorted(tmp_path: Path) -> None:
    """Must not: a sort whose reset falls on the epoch boundary is `sorted` as before."""
    src = FIXTURES / "sim" / "sorted_desc.log"
    full = pipeline.analyze(pipeline.load(str(src)))
    spe = full.meta.steps_per_epoch
    assert spe is not None and full.verdict.batching == "sorted"
    lines = int(1.6 * spe) + 5
    report = pipeline.analyze(pipeline.load(str(_prefix(src, lines, tmp_path / "s.log"))))
    assert report.verdict.batching == "sorted", report.verdict.summary
