"""Gold files of `logdoctor compare` on the simulator pair (text, Markdown and the JSON's comparison keys).

The JSON gold keeps the comparison itself and only each run's path and verdict, so that a change in a
detector's evidence does not churn it; the full reports are checked against the schema in
tests/integration/test_compare.py. Regenerate with ``LOGDOCTOR_UPDATE_GOLD=1 python -m pytest tests/gold``.
"""

from __future__ import annotations

import json
import os
from functools import cache

from logdoctor.comparison import Comparison, compare_paths
from logdoctor.comparison.jsondoc import comparison_dict
from logdoctor.comparison.views import render_markdown, render_text
from tests.conftest import FIXTURES
from tests.gold.test_gold import compare


@cache
def pair() -> Comparison:
    # relative paths: the run names in the output do not depend on where the repository lives
    here = os.getcwd()
    os.chdir(FIXTURES)
    try:
        return compare_paths("compare_static.log", ["compare_bucketed.jsonl"])
    finally:
        os.chdir(here)


def test_gold_compare_text() -> None:
    compare("compare_pair.txt", render_text(pair()))


def test_gold_compare_markdown() -> None:
    compare("compare_pair.md", render_markdown(pair()))


def test_gold_compare_json() -> None:
    doc = comparison_dict(pair())
    for side in ("baseline", "candidate"):
        doc[side] = {"path": doc[side]["source"]["path"], "batching": doc[side]["verdict"]["batching"]}
    compare("compare_pair.json", json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def test_views_open_with_the_answer() -> None:
    assert render_text(pair()).startswith("The fix worked: ")
    assert render_markdown(pair()).splitlines()[2].startswith("**The fix worked: ")
