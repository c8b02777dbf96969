"""The probe and the log agree on the real training runs: each run's sampler, built again as
bench/realruns/train.py built it, is probed before any training, and its verdict is the strategy's
and the one ``analyze`` gives the log of the run's real training (bench/realruns/probe.py runs all 42)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="needs the 'frameworks' extra: pip install -e '.[frameworks]'")

from bench.realruns.probe import compare

#: the plain loops (every strategy, statistics or not, with accumulation), an HF run of each sampler,
#: and Lightning; the other HF megabatch sizes are in bench/realruns/probe.py
RUNS = [
    "loop_random_stats",
    "loop_random_loss",
    "loop_sorted_stats",
    "loop_static_stats",
    "loop_static_stats_ga2",
    "loop_static_loss",
    "loop_fixed_stats",
    "loop_bucketed_stats",
    "loop_bucketed_stats_ga2",
    "hf_default_stats",
    "hf_gbl_stats",
    "hf_gbl_m12_ga2_stats",
    "lightning_random_loss",
]


@pytest.mark.parametrize("name", RUNS)
def test_probe_and_analyze_agree_on_a_real_run(name: str) -> None:
    r = compare(name)
    assert r["probe"] == r["want"], r
    if r["dense_stats"]:
        assert r["log"] == r["probe"], r
    else:  # a log without per-step statistics may say less, never something else
        assert r["log"] in (r["probe"], "inconclusive"), r
