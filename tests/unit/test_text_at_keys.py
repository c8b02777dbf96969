"""``Acc@1 27.240``: the ``@1`` of a top-k metric is part of its name, never its value (issue 29,
the SwAV linear-eval log of bench/realruns/public_manifest.tsv read ``val_acc = 1`` on 500 evals)."""

from __future__ import annotations

from pathlib import Path

from logdoctor import pipeline


def test_top_k_metric_keeps_its_value(tmp_path: Path) -> None:
    lines = []
    for e in range(12):
        lines.append(f"INFO - Epoch[{e}] - Iter: [0/13]\tLoss {6 - e * 0.3:.4f} (6.0)\tPrec {5 + e:.3f} (5.0)\tLR 0.3")
        lines.append(f"INFO - Test:\tLoss {5 - e * 0.2:.4f}\tAcc@1 {27.24 + e:.3f}\tBest Acc@1 so far {27.2 + e:.1f}")
    log = tmp_path / "swav_like.log"
    log.write_text("\n".join(lines) + "\n")
    evals = pipeline.load(str(log)).evals
    acc = [c for c in evals.columns if "acc" in c and "best" not in c and "far" not in c]
    assert acc, evals.columns
    assert evals[acc[0]].to_list()[:3] == [27.24, 28.24, 29.24]
