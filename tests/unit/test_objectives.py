"""A log of several objectives is reported on each one, and a non-finite one is a finding (issue 42.3)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema

from logdoctor import pipeline
from logdoctor.renderers.jsonreport import report_dict
from logdoctor.renderers.rows import facts
from tests.conftest import REPO


def _gan_csv(tmp_path: Path, nan_disc_from: int | None = None, nan_gen_from: int | None = None) -> Path:
    """A GAN's two optimizers' losses, no total: the generator's ``loss_gen`` is the main objective."""
    rows = ["step,loss_gen,loss_disc"]
    for s in range(1, 201):
        gen = 3.0 - s / 100 if nan_gen_from is None or s < nan_gen_from else math.nan
        disc = 0.7 + 0.01 * math.sin(s) if nan_disc_from is None or s < nan_disc_from else math.nan
        rows.append(f"{s},{gen},{disc}")
    path = tmp_path / "gan.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_each_objective_is_reported_in_text_and_json(tmp_path: Path) -> None:
    report = pipeline.analyze(pipeline.load(str(_gan_csv(tmp_path))))
    (disc,) = report.series.objectives
    assert (disc.name, disc.rows, disc.nonfinite) == ("loss_disc", 200, 0)
    assert disc.first is not None and abs(disc.first - 0.7) < 0.02 and disc.last is not None
    row = dict(facts(report))["other losses"]
    assert row.startswith("loss_disc 0.7") and "first and last tenth" in row
    doc = report_dict(report)
    assert doc["series"]["objectives"][0]["name"] == "loss_disc"
    schema = json.loads((REPO / "logdoctor/schema/report.schema.json").read_text())
    jsonschema.validate(json.loads(json.dumps(doc)), schema)
    assert not report.problems


def test_a_non_finite_objective_beside_a_finite_loss_is_an_error(tmp_path: Path) -> None:
    report = pipeline.analyze(pipeline.load(str(_gan_csv(tmp_path, nan_disc_from=150))))
    (nan,) = [f for f in report.findings if f.code == "LD001"]
    assert nan.evidence["objective"] == "loss_disc" and nan.first_step == 150
    assert "objective `loss_disc`" in nan.message and report.status == "error"
    assert report.series.objectives[0].nonfinite == 51


def test_a_non_finite_loss_and_its_parts_are_one_finding(tmp_path: Path) -> None:
    report = pipeline.analyze(pipeline.load(str(_gan_csv(tmp_path, nan_disc_from=150, nan_gen_from=150))))
    (nan,) = [f for f in report.findings if f.code == "LD001"]
    assert "objective" not in nan.evidence  # the analysed loss's, said once


def test_a_log_of_one_loss_has_no_objectives_row() -> None:
    report = pipeline.analyze(pipeline.load(str(REPO / "fixtures" / "example.log")))
    assert report.series.objectives == () and "other losses" not in dict(facts(report))
    assert report_dict(report)["series"]["objectives"] == []
