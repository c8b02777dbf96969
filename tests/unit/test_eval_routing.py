"""Every text shape routes its eval values to Run.evals (never to the steps), placed at a step."""

from __future__ import annotations

from pathlib import Path

from logdoctor import pipeline
from logdoctor.model import Run


def load(tmp_path: Path, text: str) -> Run:
    log = tmp_path / "train.log"
    log.write_text(text)
    return pipeline.load(str(log))


def test_nanogpt_eval_line_keeps_the_val_value_not_the_train_one(tmp_path: Path) -> None:
    lines = []
    for i in range(1, 61):
        lines.append(f"iter {i}: loss {3 - i * 0.01:.4f}, time 10.0ms")
        if i % 10 == 0:
            lines.append(f"[eval] step {i}: train loss {3 - i * 0.01:.4f}, val loss {3.1 - i * 0.005:.4f}")
    run = load(tmp_path, "\n".join(lines) + "\n")
    assert run.n_steps == 60 and "val_loss" not in run.table.columns
    assert run.evals["step"].to_list() == [10, 20, 30, 40, 50, 60]
    assert run.evals["val_loss"].to_list()[:2] == [3.05, 3.0]


def test_keras_end_of_epoch_val_values_are_evals_at_the_epoch_step(tmp_path: Path) -> None:
    lines = ["Train on 58 samples, validate on 26 samples"]
    for e in range(1, 31):
        lines += [
            f"Epoch {e}/30",
            "",
            f"32/58 [===============>..............] - ETA: 0s - loss: {1.2 - e * 0.01:.4f} - acc: 0.3125",
            f"58/58 [==============================] - 0s 7ms/step - loss: {1.2 - e * 0.01:.4f} - acc: 0.30"
            f" - val_loss: {1.0 + e * 0.02:.4f} - val_acc: 0.4615",
        ]
    run = load(tmp_path, "\n".join(lines) + "\n")
    assert run.evals.height == 30 and run.evals["step"].null_count() == 0
    assert run.evals["val_loss"].to_list()[0] == 1.02
    assert "val_loss" not in run.table.columns
    found = [f for f in pipeline.analyze(run).findings if f.code == "LD410"]
    assert found and found[0].evidence["best_step"] == run.evals["step"].to_list()[0]


def test_build_nanogpt_val_lines(tmp_path: Path) -> None:
    lines = []
    for i in range(0, 300):
        lines.append(f"{i} train {10 - i * 0.02:.6f}")
        if i % 50 == 0:
            lines.append(f"{i} val {10 - i * 0.019:.4f}")
    run = load(tmp_path, "\n".join(lines) + "\n")
    assert run.n_steps == 300
    assert run.evals.height == 6 and "val_loss" in run.evals.columns
