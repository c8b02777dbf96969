"""The blind corpus's scorer (bench/blind/corpus.py): every fault class it scores is counted by codes that exist."""

from __future__ import annotations

import re

import pytest

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


def test_manifest_option_keeps_one_manifests_rows_of_the_split() -> None:
    """``--manifest r13`` reports one round's additions apart: only that file's rows, still cut by split."""
    everything = corpus.chosen_rows("all")
    r13 = corpus.chosen_rows("all", "r13")
    assert r13 and len(r13) < len(everything)
    assert {r["manifest"] for r in r13} == {"manifest_r13.tsv"}
    dev = corpus.chosen_rows("dev", "r13")
    assert dev and all(r["split"] == "dev" and r["manifest"] == "manifest_r13.tsv" for r in dev)
    assert corpus.chosen_rows("all", "no_such_round") == []


@pytest.mark.parametrize("manifest", ["r13", "r13b", "r13c"])
def test_every_row_of_a_round_13_manifest_follows_its_split_rule(manifest: str) -> None:
    """Each round-13 manifest's split is decided by the name alone (sha1's first hex digit 0-7: holdout), so it
    cannot have been chosen after looking at what logdoctor said."""
    import hashlib

    chosen = corpus.chosen_rows("all", manifest)
    assert chosen, manifest
    for r in chosen:
        want = "holdout" if hashlib.sha1(r["name"].encode()).hexdigest()[0] in "01234567" else "dev"
        assert r["split"] == want, r["name"]
