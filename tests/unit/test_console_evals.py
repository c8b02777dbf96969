"""Eval records printed inside console logs are read as eval series; non-finite values are reported."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from logdoctor import pipeline

EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "excerpts"
# tests/data/excerpts/hf_console_wav2vec2_inf_eval.txt: lines 325-366 of
# record/turkish/clean/terminal/training.txt in neryabigon/wav2vec2-large-xlsr-53-finetuning
# (commit 07be4ae29002b46d747ab5f962c98e6e29ea0bf6; the repository's licence applies): HF Trainer
# console output, trailing blanks stripped and the tqdm bars' fill characters cut out.
HF_EXCERPT = EXCERPTS / "hf_console_wav2vec2_inf_eval.txt"


def _write(tmp_path: Path, lines: list[str], name: str = "stdout.txt") -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _codes(path: str) -> list[str]:
    return [f.code for f in pipeline.analyze(pipeline.load(path)).findings]


def test_real_hf_console_eval_dicts_are_evals_with_their_infinities() -> None:
    run = pipeline.load(str(HF_EXCERPT))
    raw = [ln for ln in HF_EXCERPT.read_text().splitlines() if ln.startswith("{'eval_loss'")]
    assert run.evals.height == len(raw) == 2
    assert all(math.isinf(v) for v in run.evals["eval_loss"].to_list())
    assert run.evals["eval_runtime"].to_list() == [564.4507, 532.1649]
    # each eval takes the step of the training row logged just before it (rows every 10 steps)
    assert run.evals["step"].to_list() == [100, 200]
    report = pipeline.analyze(run)
    ld009 = [f for f in report.findings if f.code == "LD009"]
    assert len(ld009) == 1 and "eval_loss" in ld009[0].message and "2 evaluations" in ld009[0].message
    assert (ld009[0].first_step, ld009[0].last_step) == (100, 200)


def _hf_lines(eval_loss: list[str]) -> list[str]:
    """Generated HF console output: 10 training dicts, then one eval dict, per eval value."""
    out = ["***** Running training *****", "  Num Epochs = 1", "  Total optimization steps = 400"]
    k = 0
    for value in eval_loss:
        for _ in range(10):
            k += 1
            out.append(f"{{'loss': {3 - k / 100:.4f}, 'learning_rate': 1e-05, 'epoch': {k / 40:.2f}}}")
        out.append(f"{{'eval_loss': {value}, 'eval_wer': 0.5, 'eval_runtime': 10.0, 'epoch': {k / 40:.2f}}}")
    return out


def test_generated_hf_console_nan_eval_is_reported(tmp_path: Path) -> None:
    path = _write(tmp_path, _hf_lines(["2.5", "2.4", "nan", "nan"]))
    run = pipeline.load(path)
    assert run.evals.height == 4
    report = pipeline.analyze(run)
    ld009 = [f for f in report.findings if f.code == "LD009"]
    assert len(ld009) == 1 and "NaN at 2 of 4 evaluations" in ld009[0].message


def test_generated_hf_console_finite_evals_raise_nothing(tmp_path: Path) -> None:
    path = _write(tmp_path, _hf_lines(["2.5", "2.4", "2.3", "2.2"]))
    assert pipeline.load(path).evals["eval_loss"].to_list() == [2.5, 2.4, 2.3, 2.2]
    assert "LD009" not in _codes(path)


def test_keras_val_loss_nan_is_reported(tmp_path: Path) -> None:
    lines = []
    for e in range(1, 9):
        lines.append(f"Epoch {e}/8")
        val = "nan" if e >= 6 else f"{1.0 - e / 20:.4f}"
        lines.append(
            f"100/100 [==============================] - 2s 20ms/step - loss: {1.2 - e / 20:.4f} - "
            f"accuracy: 0.{50 + e} - val_loss: {val} - val_accuracy: 0.{40 + e}"
        )
    path = _write(tmp_path, lines)
    run = pipeline.load(path)
    got = run.evals["val_loss"].to_list()
    assert sum(math.isnan(v) for v in got) == 3
    assert "LD009" in _codes(path)


def test_timings_are_no_metric(tmp_path: Path) -> None:
    """An eval_runtime of inf (a clock glitch) is not an eval fault."""
    lines = _hf_lines(["2.5", "2.4", "2.3"])
    lines = [ln.replace("'eval_runtime': 10.0", "'eval_runtime': inf") for ln in lines]
    path = _write(tmp_path, lines)
    assert pl.Series(pipeline.load(path).evals["eval_runtime"]).is_infinite().all()
    assert "LD009" not in _codes(path)


def test_columns_bad_together_are_one_finding(tmp_path: Path) -> None:
    lines = _hf_lines(["2.5", "nan", "nan"])
    lines = [ln.replace("'eval_wer': 0.5", "'eval_wer': nan") if "'eval_loss': nan" in ln else ln for ln in lines]
    path = _write(tmp_path, lines)
    report = pipeline.analyze(pipeline.load(path))
    ld009 = [f for f in report.findings if f.code == "LD009"]
    assert len(ld009) == 1 and ld009[0].message.startswith("eval_loss and eval_wer are NaN at 2 of 3")


def test_a_running_best_at_its_initial_inf_is_no_bad_evaluation(tmp_path: Path) -> None:
    # simple-nmt prints the best so far, inf before the first evaluation: no evaluation failed
    lines: list[str] = []
    for e in range(1, 13):
        best = "inf" if e == 1 else f"{3.0 - 0.05 * (e - 1):.4e}"
        lines.append(f"Epoch {e} - |param|=6.0e+02 |g_param|=3.3e+05 loss={4.0 - 0.05 * e:.4e} ppl=50.1")
        lines.append(f"Validation - loss={3.0 - 0.05 * e:.4e} ppl=20.1 best_loss={best} best_ppl={best}")
    assert "LD009" not in _codes(_write(tmp_path, lines, "train.log"))


def _deepspeech(tmp_path: Path, summary: str) -> pl.DataFrame:
    """deepspeech.pytorch's train.py: an AverageMeter line per batch, then ``Validation Summary Epoch:
    [e]`` with the epoch's error rates (SeanNaren/deepspeech.pytorch train.py:
    ``'Validation Summary Epoch: [{0}]\\tAverage WER {wer:.3f}\\tAverage CER {cer:.3f}\\t'``)."""
    lines = []
    for e in range(1, 6):
        loss = 200.0 / e
        lines.append(f"Epoch: [{e}][1/1]\tTime 2.885 (2.885)\tData 0.000 (0.000)\tLoss {loss:.4f} ({loss:.4f})\t")
        lines.append(summary.format(e=e, wer=90.0 - 5 * e, cer=50.0 - 4 * e))
    return pipeline.load(_write(tmp_path, lines)).evals


def test_an_eval_summary_of_error_rates_without_a_loss_is_an_evaluation(tmp_path: Path) -> None:
    evals = _deepspeech(tmp_path, "Validation Summary Epoch: [{e}]\tAverage WER {wer:.3f}\tAverage CER {cer:.3f}\t")
    assert evals.height == 5 and {"average_wer", "average_cer"} <= set(evals.columns), evals
    assert evals["average_cer"].to_list() == [46.0, 42.0, 38.0, 34.0, 30.0]


def test_a_summary_line_without_an_eval_word_or_a_metric_is_no_evaluation(tmp_path: Path) -> None:
    evals = _deepspeech(tmp_path, "Summary Epoch: [{e}]\tTime taken (s): {wer:.0f}\t")
    assert evals.height == 0, evals


def _coco_block(ap: float, kind: str = "bbox") -> list[str]:
    """pycocotools' COCOeval.evaluate()/summarize() output, as PaddleDetection and others print it."""
    out = [
        f"Evaluate annotation type *{kind}*",
        "DONE (t=1.21s).",
        "Accumulating evaluation results...",
        "DONE (t=0.14s).",
    ]
    rows = [("Precision", "(AP)", "0.50:0.95", "all", ap), ("Precision", "(AP)", "0.50     ", "all", ap * 2),
            ("Precision", "(AP)", "0.75     ", "all", ap / 2), ("Precision", "(AP)", "0.50:0.95", "small", -1.0),
            ("Precision", "(AP)", "0.50:0.95", "medium", ap), ("Precision", "(AP)", "0.50:0.95", "large", ap),
            ("Recall   ", "(AR)", "0.50:0.95", "all", 0.5)]  # fmt: skip
    for title, kind_, iou, area, v in rows:
        out.append(f" Average {title} {kind_} @[ IoU={iou} | area={area:>6s} | maxDets=100 ] = {v:0.3f}")
    return out


@pytest.mark.parametrize("kind", ["bbox", "segm"])
def test_a_pycocotools_summary_is_one_evaluation_named_as_mmdetection_names_it(tmp_path: Path, kind: str) -> None:
    lines = []
    for epoch in range(3):
        for i in (0, 200, 400):
            lines.append(
                f"[08/02 02:44:23] ppdet.engine INFO: Epoch: [{epoch}] [{i:3d}/464] loss: {2.0 - epoch / 2:.4f}"
            )
        lines += _coco_block(0.1 * (epoch + 1), kind)
    evals = pipeline.load(_write(tmp_path, lines)).evals
    assert evals.height == 3, evals
    assert evals[f"coco_{kind}_map"].to_list() == pytest.approx([0.1, 0.2, 0.3])
    assert all(math.isnan(v) for v in evals[f"coco_{kind}_map_s"].to_list())  # -1: no small objects
    assert not any("recall" in c or c.endswith("ar") for c in evals.columns)


def test_a_sentence_about_average_precision_is_no_summary(tmp_path: Path) -> None:
    lines = [f"step {s} loss={2.0 - s / 100:.3f}" for s in range(1, 30)]
    lines.insert(10, "Average Precision (AP) was low on the first try = 0.2 at maxDets=100")
    assert pipeline.load(_write(tmp_path, lines)).evals.height == 0
