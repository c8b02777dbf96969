"""The HTML report: self-contained, and rendered by a real headless Chromium (screenshot, no errors, no requests)."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.cli import app
from logdoctor.renderers import RENDERERS
from logdoctor.renderers.html import render_html
from tests import browser

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "fixtures" / "realruns"
SCREENSHOT = REPO / "docs" / "html_report.png"


def _html(name: str) -> str:
    return render_html(pipeline.analyze(pipeline.load(str(name))))


def test_html_is_registered_and_self_contained() -> None:
    assert RENDERERS["html"].extension == ".html"
    page = _html(str(RUNS / "pathology_lr_jump.log"))
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"(src|href)\s*=|https?:|@import|url\(|<script|<link", page, re.I)
    head = page.index("problems found")
    assert head < page.index("findings over the run") < page.index("loss (train) and eval loss")
    for chart in ("learning rate", "grad norm", "time per step", "eval_loss"):
        assert chart in page
    assert page.index("loss (train)") < page.index("<h2>Findings</h2>")


def test_healthy_run_opens_with_no_problems_found() -> None:
    page = _html(str(RUNS / "pathology_healthy.log"))
    assert "No problems found" in page and 'class="status ok"' in page


def test_one_outlier_is_clamped_and_labelled_not_squashing_the_curve() -> None:
    from logdoctor.renderers.svgcharts import display_range

    v = np.concatenate([np.linspace(3.0, 2.0, 999), [500.0]])
    lo, hi = display_range(v, log=False)
    assert hi < 10 and lo <= 2.0
    page = _html(str(RUNS / "pathology_lr_jump.log"))
    assert "(clamped)" in page


def test_batching_panels_when_the_log_has_batch_statistics(fixtures_dir: Path) -> None:
    page = _html(str(fixtures_dir / "emit_static.log"))
    assert "Batching evidence" in page and "loss vs batch mean length" in page


def test_cli_writes_the_html_file(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    out = tmp_path / "report.html"
    res = CliRunner().invoke(app, ["analyze", str(RUNS / "pathology_slowdown.log"), "-f", "html", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "LD701" in out.read_text(encoding="utf-8")


@pytest.mark.skipif(browser.chromium() is None, reason="chromium is not installed (apt-get install chromium)")
def test_chromium_renders_the_report_without_errors_or_requests(tmp_path: Path) -> None:
    from matplotlib import image

    page = tmp_path / "report.html"
    log = RUNS / "pathology_lr_jump.log"
    page.write_text(_html(os.path.relpath(log) if log.is_relative_to(Path.cwd()) else str(log)), encoding="utf-8")
    seen = browser.visit(page)
    assert seen.console_errors == []
    assert [u for u in seen.requests if u != page.resolve().as_uri()] == []  # nothing but the page itself
    pixels = image.imread(io.BytesIO(seen.screenshot), format="png")[..., :3]
    assert pixels.shape[0] > 1500 and pixels.shape[1] >= 1000
    ink = np.mean(np.any(pixels < 0.9, axis=-1))
    assert ink > 0.03, "the screenshot is blank"
    colours = {tuple(c) for c in np.round(pixels[::7, ::7] * 8).reshape(-1, 3)}
    assert len(colours) > 10, "the charts' colours are missing"
    if os.environ.get("LOGDOCTOR_UPDATE_SCREENSHOT"):
        SCREENSHOT.write_bytes(seen.screenshot)


#: Two public logs whose HTML report the README shows: a length-grouped run and a diverged one.
REAL_SCREENSHOTS = {
    "wav2vec2_xlsr_ar_clean_gbl_true_stdout.txt": "html_report_grouped.png",
    "megatron_ds_bigscience_gpt2_perf_n16_dsoff.out": "html_report_diverged.png",
}


@pytest.mark.reallogs
@pytest.mark.parametrize("name", sorted(REAL_SCREENSHOTS))
@pytest.mark.skipif(browser.chromium() is None, reason="chromium is not installed (apt-get install chromium)")
def test_chromium_screenshots_real_reports(reallogs_dir: Path, tmp_path: Path, name: str) -> None:
    from matplotlib import image

    page = tmp_path / "report.html"
    page.write_text(_html(str(reallogs_dir / name)).replace(str(reallogs_dir), "reallogs"), encoding="utf-8")
    seen = browser.visit(page)
    assert seen.console_errors == []
    assert [u for u in seen.requests if u != page.resolve().as_uri()] == []
    pixels = image.imread(io.BytesIO(seen.screenshot), format="png")[..., :3]
    assert pixels.shape[1] >= 1000 and np.mean(np.any(pixels < 0.9, axis=-1)) > 0.03
    if os.environ.get("LOGDOCTOR_UPDATE_SCREENSHOT"):
        (SCREENSHOT.parent / REAL_SCREENSHOTS[name]).write_bytes(seen.screenshot)
