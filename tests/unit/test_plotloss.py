"""The loss panel rules: outliers clamped and labelled, log scale over decades, eval drawn, local findings shaded."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl

from logdoctor import pipeline
from logdoctor.model import Report
from logdoctor.renderers.plotloss import MANY_EPOCHS, draw_epochs, fit_title, y_range
from logdoctor.renderers.plots import figure
from tests.unit.synth import healthy, make_run


def test_one_outlier_is_clamped_not_squashing_the_curve() -> None:
    loss = healthy(500, 1, start=3.0, floor=2.0)
    loss[300] = 500.0
    yr = y_range(loss)
    assert yr is not None and not yr.log
    assert yr.high < 5 and yr.clipped.tolist() == [300]


def test_warm_start_and_sustained_divergence_set_the_axis() -> None:
    warm = healthy(500, 2, start=11.0, floor=3.0, tau=20)
    yr = y_range(warm)
    assert yr is not None and yr.high >= warm.max() and not yr.clipped.size
    div = np.r_[np.full(20, 12.0), np.full(30, 45.0), np.full(50, 20.0)]
    yr = y_range(div)
    assert yr is not None and yr.high >= 45 and not yr.clipped.size


def test_loss_spanning_decades_uses_a_log_axis() -> None:
    loss = np.geomspace(0.3, 1e-4, 400)
    yr = y_range(loss)
    assert yr is not None and yr.log


def test_long_title_fits_with_both_ends() -> None:
    text = "hf_trl_sft_trainer_state_tinyllama_num_tokens.json: WARNING overfitting, steps 1000-5000 (+2 more)"
    short = fit_title(text, 5.0, 12)
    assert len(short) < len(text) and short.startswith("hf_trl") and short.endswith("(+2 more)")


def test_many_epochs_are_drawn_lightly() -> None:
    from matplotlib.figure import Figure

    ax = Figure().add_subplot()
    draw_epochs(ax, tuple(range(0, 10 * (MANY_EPOCHS + 5), 10)))
    assert all(line.get_alpha() is not None and line.get_alpha() < 0.5 for line in ax.get_lines())


def _overfit_report() -> Report:
    n = 3000
    rng = np.random.default_rng(3)
    loss = healthy(n, 3, start=5.0, floor=0.5, tau=300) * np.exp(rng.normal(0, 0.05, n))
    loss[1500] = 400.0  # one stray value
    run = make_run(loss)
    steps = np.arange(150, n + 1, 150)
    x = steps / n
    ev = 1.0 + 2.0 * np.exp(-x / 0.1) + np.where(x > 0.4, 0.8 * (x - 0.4), 0.0)
    evals = pl.DataFrame({"step": steps.astype(np.int64), "line_no": steps.astype(np.int64) + 10, "eval_loss": ev})
    return pipeline.analyze(dataclasses.replace(run, evals=evals))


def test_figure_draws_eval_clamps_the_outlier_and_puts_overfitting_over_most_of_the_run_in_the_strip() -> None:
    from matplotlib.patches import Polygon, Rectangle

    from logdoctor.renderers.plottimeline import STRIP_LABEL

    rep = _overfit_report()
    ld410 = next(f for f in rep.findings if f.code == "LD410")
    assert (ld410.first_step, ld410.last_step) == (1200, 3000)  # 60% of the run: run-wide (spans.py)
    fig = figure(rep)
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert "eval_loss" in labels and "clamped above the axis" in labels
    assert "loss (median)" in labels  # a dense noisy loss: median line over the raw band
    assert ax.get_ylim()[1] < 50  # the 400 does not squash the curve
    assert not [p for p in ax.patches if isinstance(p, Polygon | Rectangle) and p.get_label() == "overfitting"]
    strip = next(a for a in fig.axes if a.get_label() == STRIP_LABEL)
    assert "LD410" in {c.get_label() for c in strip.collections}
    assert any("max 400" in t.get_text() for t in ax.texts)
    title = fig.get_suptitle()
    assert "WARNING" in title and "overfitting" in title and "Batching:" in title
