"""Short runs are judged, not skipped (issue 41.2): a rise that stays, a loss that never moves (at ln |V|:
the uniform output), each found in a handful of rows; short healthy runs stay silent."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers.statedclasses import stated_vocab
from logdoctor.model import Report, Severity


def _analyze(tmp_path: Path, losses: list[float], head: str = "") -> Report:
    p = tmp_path / "train.log"
    p.write_text(head + "".join(f"step {10 * (i + 1)} | loss {x:.6f}\n" for i, x in enumerate(losses)))
    return pipeline.analyze(pipeline.load(str(p)))


def _problems(r: Report) -> dict[str, Severity]:
    return {f.code: f.severity for f in r.findings if f.severity >= Severity.WARNING}


def test_ten_rows_rising_several_fold_and_staying_diverge(tmp_path: Path) -> None:
    r = _analyze(tmp_path, [2.1, 1.9, 1.8, 1.7, 6.5, 9.8, 10.2, 10.5, 10.1, 10.4])
    assert _problems(r).get("LD002") == Severity.ERROR


@pytest.mark.parametrize("seed", range(5))
def test_short_noisy_healthy_runs_do_not_diverge(tmp_path: Path, seed: int) -> None:
    # must not: ten to twenty rows of a falling loss with 20% noise per row (small batches)
    rng = np.random.default_rng(seed)
    n = 10 + 2 * seed
    loss = (2.5 * np.exp(-np.arange(n) / 15) + 0.5) * (1 + rng.normal(0, 0.2, n))
    assert "LD002" not in _problems(_analyze(tmp_path, [float(x) for x in loss]))


def test_a_loss_that_never_moves_is_a_warning(tmp_path: Path) -> None:
    r = _analyze(tmp_path, [4.2] * 12)
    got = [f for f in r.findings if f.code == "LD402"]
    assert got and got[0].severity == Severity.WARNING and got[0].evidence["constant"] == 1
    assert r.status != "ok"


def test_a_loss_stuck_at_ln_vocab_is_the_uniform_output(tmp_path: Path) -> None:
    v = 50257
    r = _analyze(tmp_path, [math.log(v) + 1e-4 * (-1) ** i for i in range(12)], head=f"vocab_size: {v}\n")
    got = [f for f in r.findings if f.code == "LD421"]
    assert got and got[0].evidence["uniform_over"] == v
    assert "uniform output over the 50,257 tokens" in got[0].message


def test_a_loss_that_moves_by_a_percent_is_not_constant(tmp_path: Path) -> None:
    # must not: a converged loss wandering 1% (the healthy null's smallest range) is no stuck loss
    rng = np.random.default_rng(1)
    r = _analyze(tmp_path, [float(x) for x in 0.31 * (1 + rng.uniform(-0.005, 0.005, 12))])
    assert not {"LD402", "LD421"} & set(_problems(r))


def test_a_stuck_loss_not_at_ln_vocab_is_not_called_uniform(tmp_path: Path) -> None:
    r = _analyze(tmp_path, [7.5] * 12, head="vocab_size: 50257\n")
    assert "LD421" not in _problems(r) and _problems(r).get("LD402") == Severity.WARNING


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("vocab_size: 50257", 50257),
        ("  'n_vocab': 32000,", 32000),
        (" > padded vocab (size: 50257) with 175 dummy tokens (new size: 50432)", 50257),
        ("padded_vocab_size=50432", 50432),
        ("max_vocab_size_ratio 3", None),
        ("vocab_file: /data/vocab.json", None),
    ],
)
def test_stated_vocab(line: str, want: int | None) -> None:
    facts = stated_vocab(pl.DataFrame({"line_no": [1], "line": [line]}))
    assert [f.value for f in facts] == ([] if want is None else [want])


def test_a_short_quiet_run_says_which_checks_did_not_run(tmp_path: Path) -> None:
    from logdoctor.renderers.rows import NO_PROBLEMS, headline

    r = _analyze(tmp_path, [2.0, 1.9, 1.8, 1.7, 1.75, 1.6, 1.62, 1.5, 1.45, 1.44])
    assert r.status == "ok"
    ((level, text),) = headline(r)
    assert level == "ok" and NO_PROBLEMS not in text  # must not: "No problems found" from ten rows
    assert text == "Nothing found in 10 rows; skipped changepoints, periodicity, trends"


def test_a_long_quiet_run_says_no_problems_found(tmp_path: Path) -> None:
    from logdoctor.renderers.rows import NO_PROBLEMS, headline

    rng = np.random.default_rng(2)
    loss = 2.5 * np.exp(-np.arange(200) / 60) + 0.5 + rng.normal(0, 0.02, 200)
    r = _analyze(tmp_path, [float(x) for x in loss])
    assert not any(f.code == "LD006" for f in r.findings)
    assert r.status == "ok" and headline(r) == (("ok", NO_PROBLEMS),)
