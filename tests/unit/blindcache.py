"""A real log of the blind corpus (bench/blind/manifest_*.tsv) from its cache, or a clean skip."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.blind.corpus import cache_dir, rows


def blind_log(name: str) -> Path:
    """The cached log ``name`` (a manifest row); the test is skipped when the cache lacks it."""
    if name not in {r["name"] for r in rows()}:
        raise KeyError(f"{name} is no row of the blind manifests")
    path = cache_dir() / name
    if not path.is_file():
        pytest.skip(f"{name} is not in {cache_dir()} (python bench/blind/corpus.py fetch)")
    return path
