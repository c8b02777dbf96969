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


def test_camel_case_train_loss_is_the_loss(tmp_path: Path) -> None:
    """``TrainLoss=1.8695 TrainAcc=48.54% | ValLoss=1.3028`` (the skin-lesion log of
    public_manifest.tsv): TrainLoss is the training loss, not "a part of it" (refused before)."""
    lines = [
        f"2026-05-08 22:49:56 | INFO | Epoch [{e:03d}/30] TrainLoss={2 - e * 0.05:.4f} TrainAcc={48 + e:.2f}% | "
        f"ValLoss={1.3 - e * 0.01:.4f} ValAcc={60 + e:.2f}% | LR=1.00e-04 | Time=480.3s"
        for e in range(1, 31)
    ]
    log = tmp_path / "camel.log"
    log.write_text("\n".join(lines) + "\n")
    table = pipeline.load(str(log)).table
    assert table["loss"].to_list()[:2] == [1.95, 1.9]
    assert table["acc"].to_list()[0] == 49.0
