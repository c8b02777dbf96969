"""Eval metrics that are not losses (47.3): a collapse (LD413) and a fall from the best (LD414), each found
once per run, and the known false positives left alone."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import logdoctor
from logdoctor import pipeline
from logdoctor.detectors.evalmetrics import EvalMetricDetector
from logdoctor.detectors.evalnonfinite import EvalNonFiniteDetector

N_EVALS = 30


def _log(tmp_path: Path, metrics: dict[str, list[float]]) -> Path:
    """A JSONL run: a falling training loss every step, the eval metrics at 10-step evaluations."""
    rows: list[dict[str, float]] = []
    for s in range(1, 10 * N_EVALS + 1):
        rows.append({"step": s, "loss": 2.0 * math.exp(-s / 120) + 0.3})
        if s % 10 == 0:
            rows.append({"step": s, **{k: v[s // 10 - 1] for k, v in metrics.items()}})
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _csv(tmp_path: Path, metrics: dict[str, list[float]]) -> Path:
    """The same run as a CSV table (NaN cells stay NaN; a JSON reader may read them as null)."""
    keys = list(metrics)
    lines = ["step,loss," + ",".join(keys)]
    for s in range(1, 10 * N_EVALS + 1):
        lines.append(f"{s},{2.0 * math.exp(-s / 120) + 0.3}," + "," * (len(keys) - 1))
        if s % 10 == 0:
            lines.append(f"{s},," + ",".join(repr(metrics[k][s // 10 - 1]) for k in keys))
    path = tmp_path / "run.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _codes(path: Path) -> list[str]:
    return [f.code for f in EvalMetricDetector().analyze(pipeline.load(str(path))).findings]


def _rise(lo: float, hi: float, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(lo + (hi - lo) * (1 - math.exp(-k / 6)) + rng.normal(0, 0.004)) for k in range(N_EVALS)]


def test_a_score_zero_at_every_evaluation_is_a_collapse(tmp_path: Path) -> None:
    path = _log(tmp_path, {"metrics/mAP50(B)": [0.0] * N_EVALS, "metrics/precision(B)": [0.0] * N_EVALS})
    report = logdoctor.analyze(path)
    found = [f for f in report.problems if f.code == "LD413"]
    assert len(found) == 1 and found[0].severity.name == "WARNING"  # one finding for the family
    assert found[0].evidence["metric"] == "metrics_map50_b" and found[0].evidence["metrics"] == 2


def test_a_collapse_after_learning_is_found_with_or_without_recovery(tmp_path: Path) -> None:
    acc = _rise(0.2, 0.8)
    dead = acc[:12] + [0.001] * 6 + acc[18:]  # recovered after six evaluations at zero
    assert _codes(_log(tmp_path, {"val_acc": dead})) == ["LD413"]
    (found,) = EvalMetricDetector().analyze(pipeline.load(str(_log(tmp_path, {"val_acc": dead})))).findings
    # the level it fell from, not the higher one it rose to after recovering
    assert max(acc[:12]) < max(acc) and found.evidence["best_value"] == pytest.approx(max(acc[:12]))
    assert f"after reaching {max(acc[:12]):.4g}" in found.message
    ended = acc[:20] + [0.0] * 10
    assert "LD413" in _codes(_log(tmp_path, {"val_acc": ended}))


def test_zero_at_the_start_of_a_detector_trained_from_scratch_is_no_collapse(tmp_path: Path) -> None:
    warm = [0.0] * 5 + _rise(0.0, 0.6)[5:]
    assert _codes(_log(tmp_path, {"metrics/mAP50-95(B)": warm, "val_accuracy": _rise(0.3, 0.9)})) == []


def _evals_log(tmp_path: Path, metrics: dict[str, list[float]]) -> Path:
    """``_log`` with as many evaluations as the lists hold (no plan: the run's length is unknown)."""
    n = len(next(iter(metrics.values())))
    rows: list[dict[str, float]] = []
    for s in range(1, 10 * n + 1):
        rows.append({"step": s, "loss": 2.0 * math.exp(-s / (4 * n)) + 0.3})
        if s % 10 == 0:
            rows.append({"step": s, **{k: v[s // 10 - 1] for k, v in metrics.items()}})
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(("n", "found"), [(23, False), (24, True)])
def test_a_score_at_zero_throughout_a_run_of_unknown_plan_at_the_edge(tmp_path: Path, n: int, found: bool) -> None:
    """Healthy scores trained from scratch sat at 0 for up to 16 evaluations at their start: with no plan
    to say the run had its training, 24 evaluations at 0 are needed to call it."""
    codes = _codes(_evals_log(tmp_path, {"metrics/mAP50(B)": [0.0] * n, "metrics/recall(B)": [0.0] * n}))
    assert ("LD413" in codes) is found


def _dip(before: float, best: float) -> list[float]:
    """A score that rises to ``before`` at evaluation 8, falls under 0.01 for 4 evaluations, then rises to
    ``best`` at the end (30 evaluations)."""
    first = [before * k / 8 for k in range(1, 9)]
    dip = [0.005] * 4
    after = [0.01 + (best - 0.01) * k / 18 for k in range(1, 19)]
    return first + dip + after


@pytest.mark.parametrize(("before", "found"), [(0.27, False), (0.33, True)])
def test_a_dip_to_zero_counts_when_it_follows_half_the_best_at_the_edge(
    tmp_path: Path, before: float, found: bool
) -> None:
    """A dip back near 0 after 45% of the best (0.27 of 0.6) is the first rise's wobble (the healthy null:
    at most 50%, 17% before a stretch of 3 or more); after 55% (0.33) it is a collapse that recovered."""
    codes = _codes(_evals_log(tmp_path, {"metrics/mAP50-95(B)": _dip(before, 0.6)}))
    assert ("LD413" in codes) is found


@pytest.mark.parametrize(("peak", "found"), [(0.015, False), (0.025, True)])
def test_a_fall_into_the_band_must_lose_half_the_level_at_the_edge(tmp_path: Path, peak: float, found: bool) -> None:
    """A score that reached only 0.015 then sat at 0.005 to the end barely left its worst (the 0.01 band);
    one that reached 0.025 lost more than half of it."""
    score = [peak * k / 20 for k in range(1, 21)] + [0.005] * 10
    assert ("LD413" in _codes(_evals_log(tmp_path, {"val_acc": score}))) is found


def test_a_box_ap_that_the_model_does_not_produce_is_no_collapse(tmp_path: Path) -> None:
    # Mask2Former emits no boxes: bbox/AP is 0 by design while its mask AP is learned
    assert _codes(_log(tmp_path, {"bbox/AP": [0.0] * N_EVALS, "segm/AP": _rise(10, 60)})) == []


def test_a_fall_from_the_best_is_found_once_for_its_family(tmp_path: Path) -> None:
    up = _rise(0.3, 0.9)[:15]
    fallen = up + [up[-1] - 0.03 * k for k in range(1, 16)]
    metrics = {
        "metrics/mAP50(B)": fallen,
        "metrics/mAP50-95(B)": [v * 0.6 for v in fallen],
        "metrics/mAP50(M)": [v * 0.9 for v in fallen],
    }
    found = [f for f in EvalMetricDetector().analyze(pipeline.load(str(_log(tmp_path, metrics)))).findings]
    assert [f.code for f in found] == ["LD414"]
    assert found[0].evidence["metric"] == "metrics_map50_95_b" and found[0].evidence["metrics"] == 3


def test_an_error_rate_that_rises_from_its_best_is_a_fall(tmp_path: Path) -> None:
    wer = [0.9 - 0.6 * (1 - math.exp(-k / 4)) for k in range(15)] + [0.32 + 0.03 * k for k in range(1, 16)]
    assert _codes(_log(tmp_path, {"eval_wer": wer})) == ["LD414"]
    # a WER above 100% with no epoch length known: how long the model had to learn is unknown
    assert _codes(_log(tmp_path, {"eval_wer": [1.2] * N_EVALS})) == []


def test_a_lucky_first_evaluation_is_no_best(tmp_path: Path) -> None:
    # YOLO's precision and mAP at epoch 1 from a handful of predictions, then a normal rise
    ap = [0.9, 0.05, *_rise(0.1, 0.6)[2:]]
    assert _codes(_log(tmp_path, {"metrics/mAP50(B)": ap})) == []


def test_precision_and_recall_trading_against_each_other_are_no_fall(tmp_path: Path) -> None:
    prec = [0.95 - 0.012 * k for k in range(N_EVALS)]
    rec = [0.3 + 0.015 * k for k in range(N_EVALS)]
    assert _codes(_log(tmp_path, {"metrics/precision(B)": prec, "metrics/recall(B)": rec})) == []


@pytest.mark.parametrize("fall", [0.20, 0.30])
def test_the_fall_threshold_at_its_edge(tmp_path: Path, fall: float) -> None:
    """25% of the best level: 20% is within the healthy runs' null, 30% beyond it."""
    best = 0.8
    acc = [best * (1 - math.exp(-k / 3)) for k in range(10)] + [best] * 3
    acc += list(np.linspace(best, best * (1 - fall), 17))
    assert (_codes(_log(tmp_path, {"val_acc": acc})) == ["LD414"]) == (fall > 0.25)


def test_a_size_bucket_ap_that_is_nan_while_its_siblings_are_finite_is_no_error(tmp_path: Path) -> None:
    ap = _rise(10, 40)
    metrics = {
        "bbox/AP": ap,
        "bbox/AP50": [v * 1.5 for v in ap],
        "bbox/APs": [float("nan")] * N_EVALS,
        "bbox/APl": [v * 1.2 for v in ap],
    }
    run = pipeline.load(str(_csv(tmp_path, metrics)))
    # undefined for the data (no small object): made missing at reading (ingest/parsers/namedtotal.py),
    # never a non-finite evaluation; its finite siblings stay evaluations
    assert "bbox_ap" in run.evals.columns and EvalNonFiniteDetector().analyze(run).findings == ()
    # NaN in every AP of the family at the last evaluations is a broken evaluation
    broken = {k: [*v[:20], *[float("nan")] * 10] for k, v in metrics.items() if k != "bbox/APs"}
    run = pipeline.load(str(_csv(tmp_path, {**broken, "bbox/APs": metrics["bbox/APs"]})))
    assert {f.code for f in EvalNonFiniteDetector().analyze(run).findings} == {"LD009"}


def _epochs_log(tmp_path: Path, metrics: dict[str, list[float]], steps_per_epoch: int) -> Path:
    """The run of ``_log`` with an epoch counter (HF's fractional epoch), so that its epochs are known."""
    rows: list[dict[str, float]] = []
    for s in range(1, 10 * N_EVALS + 1):
        rows.append({"step": s, "epoch": s / steps_per_epoch, "loss": 2.0 * math.exp(-s / 120) + 0.3})
        if s % 10 == 0:
            rows.append({"step": s, "epoch": s / steps_per_epoch, **{k: v[s // 10 - 1] for k, v in metrics.items()}})
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _stuck(level: float, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(level + abs(rng.normal(0, 0.01))) for _ in range(N_EVALS)]


@pytest.mark.parametrize(("level", "found"), [(0.95, True), (0.94, False)])
def test_an_error_rate_that_never_leaves_its_worst_over_many_epochs_is_no_learning(
    tmp_path: Path, level: float, found: bool
) -> None:
    """30 evaluations over 15 epochs: a WER at or above 95% at every one is a model that never learned
    (deepspeech.pytorch's CER 98.4-100 for 18 epochs); just below 95% at its best it says nothing."""
    wer = _stuck(level)
    wer[7] = level  # the best evaluation sits exactly at the level
    report = EvalMetricDetector().analyze(pipeline.load(str(_epochs_log(tmp_path, {"eval_wer": wer}, 20))))
    hits = [f for f in report.findings if f.code == "LD413"]
    assert bool(hits) is found
    if found:
        assert hits[0].evidence["epochs"] == 15 and "never learned" in hits[0].message


def test_an_error_rate_at_its_worst_for_a_few_epochs_is_the_start_of_a_ctc_fine_tune(tmp_path: Path) -> None:
    """A wav2vec2 CTC fine-tune emits empty transcripts (WER 1.0) for its first epoch or so: the same 30
    evaluations over 3 epochs are no finding, nor is a WER at 1.0 that then falls."""
    assert _codes(_epochs_log(tmp_path, {"eval_wer": [1.0] * N_EVALS}, 100)) == []
    start = [1.0] * 8 + [1.0 - 0.6 * (1 - math.exp(-k / 4)) for k in range(1, N_EVALS - 7)]
    assert _codes(_epochs_log(tmp_path, {"eval_wer": start, "eval_cer": [v / 3 for v in start]}, 20)) == []


def test_a_classifier_error_rate_counts_and_a_translation_edit_rate_does_not(tmp_path: Path) -> None:
    """TER exceeds 100% in a healthy translation run (short references, insertions); a classifier's
    error rate at 97% over 15 epochs is a model that never beat always-wrong."""
    assert _codes(_epochs_log(tmp_path, {"validation_ter": _stuck(1.2)}, 20)) == []
    assert _codes(_epochs_log(tmp_path, {"valid_error_rate": _stuck(0.97)}, 20)) == ["LD413"]


def test_one_evaluation_at_exactly_zero_is_no_collapse(tmp_path: Path) -> None:
    """Healthy detectors print mAP exactly 0 at their first 1-4 evaluations (YOLO from scratch, an
    MMDetection YOLOv3's mAP_s, an RTMPose AP75: the real logs of tests/answers.tsv), so a run with
    one evaluation, at 0, says nothing yet of a collapse."""
    path = tmp_path / "run.jsonl"
    rows = [{"step": s, "loss": 2.0 * math.exp(-s / 120) + 0.3} for s in range(1, 201)]
    rows.append({"step": 200, "bbox_mAP": 0.0, "bbox_mAP_50": 0.0})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _codes(path) == []
