"""Shared pytest fixtures: repository paths and the optional real-logs folder."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
REALLOGS = REPO.parent / "shared" / "reallogs"


@pytest.fixture
def fixtures_dir() -> Path:
    """The folder of generated fixture logs."""
    return FIXTURES


@pytest.fixture
def reallogs_dir() -> Path:
    """``../shared/reallogs``; the test is skipped when it is absent."""
    if not (REALLOGS / "MANIFEST.tsv").is_file():
        pytest.skip("../shared/reallogs is not present")
    return REALLOGS
