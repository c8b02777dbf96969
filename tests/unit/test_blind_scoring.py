"""The blind corpus's scorer (bench/blind/corpus.py): every fault class it scores is counted by codes that exist."""

from __future__ import annotations

import re

from bench.blind import corpus
from logdoctor.codes import RULES


def test_every_class_code_is_a_rule() -> None:
    """A code that no rule has (a renamed or never-built one) would count a class as never found."""
    named = {code for codes in corpus.CLASS_CODES.values() for code in codes}
    assert named <= set(RULES), sorted(named - set(RULES))


def test_every_failure_class_of_the_manifests_is_scored() -> None:
    """A class written in a manifest's ``failures`` that the scorer does not know would be dropped
    from the recall silently."""
    used = {cls for row in corpus.rows() for cls in row["failures"].split()}
    assert used <= set(corpus.CLASS_CODES), sorted(used - set(corpus.CLASS_CODES))


def test_classes_with_a_named_code_are_scored_by_it() -> None:
    """The rules whose own description names a fault class are counted for it (the scorer had
    recovered OOMs, failed restores and eval collapses as undetectable beside LD012, LD015, LD413)."""
    for cls, code in [("oom_recovered", "LD012"), ("restore_failed", "LD015"), ("metric_collapse", "LD413")]:
        assert code in corpus.CLASS_CODES[cls]
        assert re.search(r"oom|restor|collapse", RULES[code].name)
