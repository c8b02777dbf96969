"""The Keras bar rewrite built from its match equals the regex replacement it stands for, and the
bare-record rules that cannot apply to a sample are not run on it."""

from __future__ import annotations

import random

import polars as pl

from logdoctor.ingest.parsers import textblocks
from logdoctor.ingest.parsers.textblocks import KERAS, apply_rules

RULE = ((KERAS, "batches $1/$2 | "),)


def _lines(n: int, seed: int = 5) -> list[str | None]:
    """Bars as Keras draws them, and near misses: blanks of every kind, Unicode digits, dashes."""
    rng = random.Random(seed)
    blanks = ["", " ", "   ", "\t", "\u2003", " \u00a0"]
    digits = ["3", "12", "\u0663", "007"]
    bars = ["", "=", "==>...", "[", "=-"]
    middles = ["ETA: 41s", "1s 7ms/step", "a-b", "", "x - y"]
    lines: list[str | None] = [None, "", "Epoch 1/3", "x 3/5 [=] - a - b", "3/5 [=] -a - b"]
    for _ in range(n):
        lines.append(
            f"{rng.choice(blanks)}{rng.choice(digits)}/{rng.choice(digits)} [{rng.choice(bars)}] - "
            f"{rng.choice(middles)} - loss: {rng.random():.4f}{rng.choice(['', ' - acc: 0.5', ' - '])}"
        )
    return lines


def test_keras_rule_equals_its_regex_replacement() -> None:
    lines = pl.Series("line", _lines(400))
    expected = lines.str.replace(KERAS, "batches $1/$2 | ")
    got = apply_rules(lines, RULE)
    assert got.to_list() == expected.to_list()
    assert got.name == "line"
    assert expected.str.starts_with("batches ").sum() > 100  # the bars were rewritten, not only the misses


def test_keras_match_is_the_rule_without_its_groups() -> None:
    assert KERAS.replace("(", "").replace(")", "") == textblocks._KERAS_MATCH


def test_general_path_rewrites_keras_bars_in_place() -> None:
    frame = pl.DataFrame({"line_no": [1, 2], textblocks.MSG: ["Epoch 1/2", "  3/5 [=>.] - ETA: 1s - loss: 0.5"]})
    out, folded = textblocks.rewrite(frame)
    assert out.columns == ["line_no", textblocks.MSG] and folded == 0
    assert out[textblocks.MSG].to_list() == ["Epoch 1/2", "batches 3/5 | loss: 0.5"]


def test_all_rules_by_default_as_each_rewrites() -> None:
    lines = pl.Series(["12 train 3.5", "Epoch 2:  40%|####  | 4/10 [00:01<00:02, 3.1it/s, loss=1]", *_lines(50)])
    expected = lines
    for pattern, repl in textblocks._BARE:
        expected = expected.str.replace(pattern, repl)
    assert apply_rules(lines).to_list() == expected.to_list()


def test_cheap_colon_test_is_the_rule_with_its_key_unbounded() -> None:
    assert textblocks._COLON_CONT.count("{0,60}?") == 1
    long_key = "  " + "k" * 70 + ": 0.5"
    lines = pl.Series(["    loss_mel: 19.08  (19.50)", long_key, '  File "x.py", line 3'])
    assert lines.str.contains(textblocks._COLON_CONT_ANY).to_list() == [True, True, False]
    assert lines.str.contains(textblocks._COLON_CONT).to_list() == [True, False, False]
    frame = pl.DataFrame({"line_no": [1, 2, 3], textblocks.MSG: ["step 1 | loss 2.0", "  " + "k" * 70 + ": 0.5", "x"]})
    assert textblocks.rewrite(frame)[0][textblocks.MSG].to_list() == frame[textblocks.MSG].to_list()
