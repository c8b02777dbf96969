"""HF megabatch windows from batch statistics (diagnosis/windows.py): what must be found and what must not."""

from __future__ import annotations

import numpy as np

from logdoctor.diagnosis import windows as win
from logdoctor.diagnosis.epochs import Epochs
from logdoctor.diagnosis.thresholds import DEFAULT


def epochs_of(n_epochs: int, spe: int) -> Epochs:
    return Epochs(np.repeat(np.arange(n_epochs), spe), tuple(1 + e * spe for e in range(n_epochs)), spe, "epoch column")


def series(kind: str, n_epochs: int = 5, spe: int = 40, m: int = 10, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_epochs):
        x = rng.lognormal(4, 0.5, spe)
        if kind == "grouped":
            x = np.concatenate([np.sort(x[i : i + m])[::-1] for i in range(0, spe, m)])
        elif kind == "sorted":
            x = np.sort(x)[::-1]
        out.append(x)
    return np.concatenate(out)


def test_hf_mult_is_hf_formula() -> None:
    assert win.hf_mult(320, 8) == 10 and win.hf_mult(96, 8) == 3 and win.hf_mult(10_000, 8) == 50
    assert win.hf_mult(20, 8) == 1


def test_grouped_windows_are_found_at_hf_size() -> None:
    steps = np.arange(1, 201)
    seqs = np.full(200, 8.0)
    s = win.find(steps, series("grouped"), seqs, epochs_of(5, 40), None, DEFAULT.min_monotone)
    assert s.found is not None and s.found.steps == 10 and s.found.is_hf and s.found.samples == 320


def test_a_full_sort_and_a_shuffle_are_not_windows() -> None:
    steps, seqs = np.arange(1, 201), np.full(200, 8.0)
    assert win.find(steps, series("sorted"), seqs, epochs_of(5, 40), None, DEFAULT.min_monotone).found is None
    for seed in range(20):
        found = win.find(steps, series("random", seed=seed), seqs, epochs_of(5, 40), 7.0, DEFAULT.min_monotone).found
        assert found is None


def test_rows_merged_over_intervals_that_never_fit_a_window_are_hidden() -> None:
    steps = np.arange(10, 481, 10)  # 48-step epochs, 12-step windows, rows of 10 steps
    idx = (steps - 1) // 48
    ep = Epochs(idx, tuple(int(steps[np.argmax(idx == e)]) for e in range(10)), 48, "epoch column")
    x = series("random", 1, 48)[: steps.size]
    s = win.find(steps, x, np.full(steps.size, 80.0), ep, None, DEFAULT.min_monotone)
    assert s.found is None and s.hf_steps == 12 and not s.hf_tested and s.stride == 10


def test_significance_without_effect_is_not_windows() -> None:
    """A 1.7% sign excess over ~10^5 changes (a simulated shuffle of token-budget batches) has
    p < 1e-4 but is no megabatch: HF's windows go one way ~100% of the time."""
    weak = win.Windows(50, 50, 219342, 10, 97449, 49568, 3.3e-8, 1989, 1026, "descending")
    assert weak.p_within < win.ALPHA and not weak.found(DEFAULT.min_monotone)
    strong = win.Windows(50, 50, 1600, 8, 585, 585, 7.9e-177, 9, 9, "descending")
    assert strong.found(DEFAULT.min_monotone)


def test_the_grouped_summary_names_hf_quarter_epoch_megabatch() -> None:
    """Issue 31.8: a 12-step window on a run whose HF megabatch is 12 steps is HF's, not "another size"."""
    from logdoctor.diagnosis.megabatch import window_sampler

    assert "mega_batch_mult=12" in window_sampler(12.0, 12)
    assert "another size" in window_sampler(12.0, None)
    assert "mega_batch_mult=50" in window_sampler(50.0, 12)


def test_the_window_rule_asks_the_sorted_rules_configured_min_monotone() -> None:
    """Windows whose changes go one way 71% of the time (and jump back at 71% of the starts) are
    found under min_monotone 0.7 and not under 0.72: one threshold for sorted order, configured once."""
    w = win.Windows(50, 50, 1600, 8, 1000, 710, 1e-40, 100, 71, "descending")
    assert w.found(0.7) and not w.found(0.72)
    assert not win.Windows(50, 50, 1600, 8, 1000, 690, 1e-30, 100, 71, "descending").found(0.7)
