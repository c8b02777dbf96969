"""The bucket plan as a PNG: length histogram with the boundaries, and efficiency against K."""

from __future__ import annotations

import io

import numpy as np
from numpy.typing import NDArray

from logdoctor.bucketing.plan import BucketPlan


def render_png(plan: BucketPlan, lengths: NDArray[np.int64]) -> bytes:
    """Two panels: the (truncated) length histogram on a log axis with the recommended upper
    boundaries drawn, and the modelled padding efficiency for K = 1, 2, ... buckets with the
    simulated strategies as reference lines. matplotlib is imported here so the CLI starts fast."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    clipped = np.minimum(lengths, plan.max_seq_len)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    lo = max(1, int(clipped.min()))
    bins = np.unique(np.geomspace(lo, max(lo + 1, int(clipped.max())), 80).astype(np.int64))
    ax1.hist(clipped, bins=bins, color="#4c72b0")
    ax1.set_xscale("log")
    for b in plan.boundaries:
        ax1.axvline(b, color="#c44e52", lw=1)
    ax1.set_xlabel("sequence length (tokens)")
    ax1.set_ylabel("sequences")
    ax1.set_title(f"{plan.sequences:,} lengths, {len(plan.boundaries)} buckets")
    ks = np.arange(1, len(plan.efficiency_by_k) + 1)
    ax2.plot(ks, plan.efficiency_by_k, "o-", label="model: padded to bucket upper bound")
    styles = {"sorted": ":", "bucketed": "--", "random": "-."}
    for name, style in styles.items():
        ax2.axhline(plan.strategies[name].padding_efficiency, ls=style, color="grey")
        ax2.annotate(
            f"{name} (simulated)",
            (ks[-1], plan.strategies[name].padding_efficiency),
            ha="right",
            va="bottom",
            fontsize=8,
        )
    ax2.axvline(len(plan.boundaries), color="#c44e52", lw=1)
    ax2.set_xlabel("buckets K")
    ax2.set_ylabel("padding efficiency (real / processed)")
    ax2.set_ylim(0, 1.02)
    ax2.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()
