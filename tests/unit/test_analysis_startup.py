"""A small analysis loads no heavy module: no scipy, no ruptures package, no matplotlib or pandas.

Everyday logs (hundreds to ~10k steps) are mostly import time; scipy.stats alone costs more than
the whole analysis. Each heavy part is loaded only by the stage that needs it (1M-step rolling
medians, plots), so these runs must finish without it. The probe runs the real CLI in a fresh
interpreter and lists what it imported; the control case shows the probe sees a heavy import.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
#: top-level packages (or package prefixes) a small analysis must not import
HEAVY = ("scipy", "ruptures", "matplotlib", "pandas", "torch", "sklearn")
#: logdoctor's own modules that a text or JSON report of a small log does not use (issue 33)
UNUSED = (
    "logdoctor.renderers.plots",
    "logdoctor.renderers.plotloss",
    "logdoctor.renderers.plotfold",
    "logdoctor.renderers.svgcharts",
    "logdoctor.renderers.html",
    "logdoctor.renderers.junit",
    "logdoctor.renderers.markdown",
    "logdoctor.renderers.github",
    "logdoctor.tail",
    "logdoctor.comparison",
    "logdoctor.buckets",
    "logdoctor.emit",
    "logdoctor.parallel",
    "logdoctor.detectors.lrloss",
)
#: compiled extensions that need only numpy, loaded by their file (not their packages)
ALONE = ("ruptures.detection._detection.ekcpd", "scipy.ndimage._rank_filter_1d")


def _heavy_after(args: list[str], pre: str = "") -> list[str]:
    """Run ``logdoctor ARGS`` in a fresh interpreter; the heavy (or ``UNUSED``) modules it left in sys.modules.

    The two compiled extensions loaded by file without their package ``__init__`` (ruptures'
    search, detectors/kernelcpd.py; scipy's 1-D median filter, stats/ndmedian.py) are allowed.
    """
    code = (
        f"import json, sys; {pre}\n"
        "from logdoctor.cli import main\n"
        f"rc = main({args!r})\n"
        f"mods = sorted(m for m in sys.modules if (m.split('.')[0] in {HEAVY!r} and m not in {ALONE!r})"
        f" or m.startswith({UNUSED!r}))\n"
        "print(json.dumps({'rc': rc, 'heavy': mods}))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["rc"] in (0, 1), out.stderr
    return list(res["heavy"])


def _loss_only_log(path: Path, steps: int = 10_000) -> Path:
    """A seeded loss-only text log: a decaying loss with Gaussian noise."""
    rng = random.Random(5)
    with path.open("w") as fh:
        for s in range(1, steps + 1):
            fh.write(f"step {s} | loss={2 + 3 * math.exp(-s / 2000) + rng.gauss(0, 0.05):.4f}\n")
    return path


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("name", ["example.log", "spiky.log", "loss-only 10k", "loss-only 2k"])
def test_a_small_analysis_imports_no_heavy_module(name: str, fmt: str, tmp_path: Path) -> None:
    """``loss-only 2k``: an even number of rows, whose whole-run trend window is one row longer
    than the series (it imported scipy.ndimage in every process and -j worker)."""
    steps = 2000 if name.endswith("2k") else 10_000
    path = _loss_only_log(tmp_path / "loss.log", steps) if name.startswith("loss-only") else FIXTURES / name
    assert _heavy_after(["analyze", str(path), "--format", fmt, "-o", str(tmp_path / "out")]) == []


def test_the_probe_sees_a_heavy_import(tmp_path: Path) -> None:
    """Control: the same probe reports a heavy module that was imported (the test can fail)."""
    out = str(tmp_path / "out")
    heavy = _heavy_after(["analyze", str(FIXTURES / "example.log"), "-o", out], pre="import scipy.stats")
    assert "scipy.stats" in heavy


def test_the_figure_code_is_loaded_when_a_figure_is_asked_for(tmp_path: Path) -> None:
    """Control for ``UNUSED``: the HTML report does load the SVG charts (and the probe sees it)."""
    heavy = _heavy_after(["analyze", str(FIXTURES / "example.log"), "-f", "html", "-o", str(tmp_path / "o")])
    assert "logdoctor.renderers.svgcharts" in heavy


def test_the_lr_response_code_is_loaded_when_an_lr_jump_is_judged(tmp_path: Path) -> None:
    """Control for ``logdoctor.detectors.lrloss`` in ``UNUSED``: a log with an lr jump loads it."""
    heavy = _heavy_after(["analyze", str(FIXTURES / "schedule" / "lr_jump.jsonl"), "-o", str(tmp_path / "o")])
    assert "logdoctor.detectors.lrloss" in heavy
