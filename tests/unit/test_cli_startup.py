"""The CLI starts fast: importing it loads no polars, numpy, scipy or matplotlib."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from logdoctor.cli import FORMAT_NAMES
from logdoctor.renderers import RENDERERS

REPO = Path(__file__).resolve().parents[2]


def test_format_names_in_help_match_the_registry() -> None:
    assert tuple(RENDERERS) == FORMAT_NAMES


def test_importing_the_cli_loads_no_heavy_module() -> None:
    code = (
        "import sys, logdoctor.cli; "
        "print(sorted(m for m in ('polars', 'numpy', 'scipy', 'matplotlib', 'ruptures') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
