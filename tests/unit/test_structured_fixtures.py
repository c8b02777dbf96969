"""Every structured-format fixture parses to its known answer (values, not just counts)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import Run

FORMATS = Path(__file__).resolve().parents[2] / "fixtures" / "formats"
TRUTHS = sorted(p for p in FORMATS.glob("*.truth.json") if not p.name.startswith(("text_", "txt_")))
STRUCT_PREFIXES = ("jsonl_", "csv_", "hf_", "mlflow_", "struct_", "tb_")
TRUTHS = [p for p in TRUTHS if p.name.startswith(STRUCT_PREFIXES)]


def _load(truth_path: Path) -> tuple[Run, dict]:
    truth = json.loads(truth_path.read_text())
    if truth["format"] == "tensorboard":
        import tensorboard  # noqa: F401  # in [dev]: a missing reader fails here, never skips
    if truth_path.name.endswith(".zst.truth.json"):
        pytest.importorskip("zstandard")
    target = truth_path.with_name(truth_path.name.removesuffix(".truth.json"))
    return pipeline.load(str(target)), truth


def test_fixtures_exist() -> None:
    assert len(TRUTHS) >= 12


@pytest.mark.parametrize("truth_path", TRUTHS, ids=lambda p: p.name.removesuffix(".truth.json"))
def test_fixture_matches_truth(truth_path: Path) -> None:
    run, truth = _load(truth_path)
    meta = run.meta
    assert meta.format == truth["format"]
    assert run.n_steps == truth["steps"]
    assert int(run.table["step"][0]) == truth["first_step"]
    assert int(run.table["step"][-1]) == truth["last_step"]
    assert meta.resumes == truth["resumes"]
    assert list(meta.resume_steps) == truth["resume_steps"]
    assert meta.overwritten_steps == truth["overwritten_steps"]
    assert meta.duplicate_steps == truth["duplicate_steps"]
    assert meta.nonmonotonic_steps == truth["nonmonotonic_steps"]
    for key in ("steps_per_epoch", "total_steps"):
        if key in truth:
            assert getattr(meta, key) == truth[key], key
    if "evals" in truth:
        assert run.evals.height == truth["evals"]
    rows = {int(s): i for i, s in enumerate(run.table["step"])}
    for step, expected in truth["values"].items():
        row = rows[int(step)]
        for col, value in expected.items():
            got = run.table[col][row]
            if value == "nan":
                assert math.isnan(got), (step, col)
            else:
                assert got == pytest.approx(value, rel=1e-6), (step, col)
