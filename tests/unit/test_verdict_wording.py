"""The verdict's sentences name only what is known: no ``None`` where a step would stand."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from logdoctor import codes
from logdoctor.diagnosis.batching import BatchingDiagnosis
from logdoctor.model import Run, RunMeta, validate_run


def _loss_only_run() -> Run:
    n = 600
    rng = np.random.default_rng(1)
    table = pl.DataFrame(
        {
            "step": np.arange(1, n + 1),
            "line_no": np.arange(1, n + 1),
            "loss": 2 + np.exp(-np.arange(n) / 200) + rng.normal(0, 0.05, n),
        }
    )
    return Run(validate_run(table), RunMeta("-", "test"))


@pytest.mark.parametrize(("first", "said"), [(120, "(first at step 120)"), (None, "grad-norm spikes),")])
def test_instability_from_grad_norm_spikes_says_where_they_start_or_nothing(first: int | None, said: str) -> None:
    """LD102 names the instability cause; the loss-only verdict quotes its first step."""
    finding = codes.finding("LD102", "spikes", confidence=0.9, first_step=first)
    v = BatchingDiagnosis().diagnose(_loss_only_run(), [finding]).verdict
    assert said in v.summary
    assert "None" not in v.summary
