"""The fleet report from the CLI (--executor local): worst first with counts, the list of
documents, an index page linking each run's own report, and check's exit by the worst run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures.fleet import diverges, write_fleet
from logdoctor.cli import main

# one worker holds this module's expensive fixture (--dist loadgroup), not each worker its own
pytestmark = pytest.mark.xdist_group("fleet-report")

RUNS = 6


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("runs")
    write_fleet(folder, RUNS)  # run_004 diverges
    (folder / "broken.log").write_text("no steps in here\n")
    return folder


def test_text_is_worst_first_with_counts(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(runs), "--executor", "local", "-j", "1"]) == 1
    out, err = capsys.readouterr()
    assert "skipped" in err and "broken.log" in err
    lines = out.splitlines()
    assert lines[0] == f"Fleet (in {runs}/)" and lines[1].split()[:6] == [
        "run",
        "steps",
        "status",
        "worst",
        "problem",
        "batching",
    ]
    assert lines[2].split()[:4] == ["run_004.log", "400", "error", "nonfinite-loss"]
    assert f"{RUNS} runs: 1 error" in out and "runs per rule: nonfinite-loss 1" in out
    assert main(["check", str(runs), "--executor", "local", "--exit-zero"]) == 0
    assert main(["analyze", str(runs), "--executor", "local"]) == 0


def test_json_is_the_documents_in_input_order(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "fleet.json"
    assert main(["check", str(runs), "--executor", "local", "-f", "json", "-o", str(out)]) == 1
    docs = json.loads(out.read_text())
    assert [d["source"]["path"] for d in docs] == [str(runs / f"run_{i:03d}.log") for i in range(RUNS)]
    assert [d["status"] == "error" for d in docs] == [diverges(i) for i in range(RUNS)]
    single = tmp_path / "one.json"
    assert main(["analyze", str(runs / "run_004.log"), "-f", "json", "-o", str(single)]) == 0
    assert json.loads(single.read_text()) == docs[4]  # the document of the single-run path


def test_html_is_an_index_linking_each_runs_page(runs: Path, tmp_path: Path) -> None:
    folder = tmp_path / "fleet"
    assert main(["analyze", str(runs), "--executor", "local", "-f", "html", "-o", str(folder)]) == 0
    index = (folder / "index.html").read_text()
    pages = sorted(p.name for p in folder.glob("0*.html"))
    assert len(pages) == RUNS and all(f'href="{p}"' in index for p in pages)
    assert index.index("run_004.log") < index.index("run_000.log")  # worst first
    assert index.count("<polyline") == RUNS and "<script" not in index
    page = (folder / pages[4]).read_text()
    assert "run_004.log" in page and "<svg" in page


def test_formats_without_a_fleet_report_are_refused(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(runs), "--executor", "local", "-f", "junit"]) == 2
    assert "text, json or html" in capsys.readouterr().err
    assert main(["analyze", str(runs), "--executor", "local", "-f", "html"]) == 2  # to stdout: no folder
    assert "-o FOLDER" in capsys.readouterr().err


def test_standard_input_never_goes_to_an_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "-", "--executor", "dask"]) == 2
    assert "standard input" in capsys.readouterr().err
    assert main(["check", "x.log", "--executor", "spark"]) == 2
    assert "--executor" in capsys.readouterr().err
