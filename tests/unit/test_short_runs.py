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


# A run of 3-7 rows: the jump of a row above the lowest loss before it, over the first loss
# (detectors/shortjump.py; the healthy null's largest is 0.65 of the first loss).


def test_three_rows_ending_on_a_blow_up_diverge(tmp_path: Path) -> None:
    r = _analyze(tmp_path, [290.7, 256.1, 539100.0])
    ld002 = next(f for f in r.findings if f.code == "LD002")
    assert ld002.severity == Severity.ERROR and ld002.first_step == 30
    assert "256.1" in ld002.message and "last row" in ld002.message


def test_five_rows_jumping_and_coming_back_are_a_spike_not_divergence(tmp_path: Path) -> None:
    r = _analyze(tmp_path, [14.13, 76.77, 31.70, 21.15, 16.97])
    got = _problems(r)
    assert got.get("LD101") == Severity.WARNING and "LD002" not in got
    spike = next(f for f in r.findings if f.code == "LD101")
    assert spike.first_step == 20 and "76.77" in spike.message


def test_a_jump_that_holds_to_the_last_row_of_a_short_run_diverges(tmp_path: Path) -> None:
    r = _analyze(tmp_path, [3.0, 2.6, 2.4, 9.5, 11.0, 10.4])
    assert _problems(r).get("LD002") == Severity.ERROR and "LD101" not in _problems(r)


@pytest.mark.parametrize(
    "losses",
    [
        [1.92, 1.61, 1.95, 2.44, 2.86, 2.47, 2.29],  # a loss climbing during lr warm-up (the null's largest)
        [6.93, 8.61, 7.74, 7.28, 7.18, 7.03],  # a first-rows bump that settles
        [0.043, 0.049, 0.044, 0.045, 0.044, 0.046],  # a fine-tune that starts low and moves little
        [2.3, 1.4, 1.1, 0.9, 0.8, 0.75, 0.7],  # the epoch-level curve of a healthy run
        [0.9, 0.02, 0.03, 0.025],  # fell fast, a small rise above a tiny minimum (2x the minimum, 0.01 of the start)
    ],
)
def test_short_healthy_curves_have_no_jump(tmp_path: Path, losses: list[float]) -> None:
    got = _problems(_analyze(tmp_path, losses))
    assert "LD101" not in got and "LD002" not in got


def test_the_jump_needs_a_positive_loss() -> None:
    from logdoctor.detectors.robust import Series
    from logdoctor.detectors.shortjump import short_jump

    steps = np.arange(1, 6)
    values = np.array([0.2, -0.1, 0.9, 0.1, 0.05])  # a loss that crosses 0 (a reward-like objective)
    assert short_jump(Series(steps, values, steps, False)) is None
    positive = np.array([0.2, 0.1, 0.9, 0.1, 0.05])
    jump = short_jump(Series(steps, positive, steps, True))
    assert jump is not None and jump.row == 2 and jump.low_row == 1 and not jump.held
