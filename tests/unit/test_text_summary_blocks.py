"""An indented ``key = value`` block holds together past a clock-valued line, so HF's ``***** train
metrics *****`` summary (its ``train_runtime = 17:52:38.15``) is dropped whole, never read as a step."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.model import LOSS

_SUMMARY = [
    "***** train metrics *****",
    "  epoch                    =        10.0",
    "  train_loss               =      0.4479",
    "  train_runtime            = {runtime}",
    "  train_samples            =        3290",
    "  train_samples_per_second =       0.511",
    "  train_steps_per_second   =       0.085",
]


def _hf_console(tmp_path: Path, runtime: str) -> list[float]:
    lines = ["***** Running training *****", "  Num Epochs = 10", "  Total optimization steps = 200"]
    for k in range(1, 21):
        lines.append(f"{{'loss': {2.0 / k + 0.2:.4f}, 'learning_rate': 1e-05, 'epoch': {k / 2:.2f}}}")
    lines += [line.format(runtime=runtime) for line in _SUMMARY]
    path = tmp_path / "console.txt"
    path.write_text("\n".join(lines) + "\n")
    return pipeline.load(str(path)).table[LOSS].to_list()


@pytest.mark.parametrize("runtime", ["17:52:38.15", "1 day, 2:03:04", "64358.151"])
def test_the_train_metrics_summary_is_no_step(tmp_path: Path, runtime: str) -> None:
    losses = _hf_console(tmp_path, runtime)
    assert len(losses) == 20 and 0.4479 not in losses  # the run's mean loss is no step


def test_a_block_of_a_training_record_still_joins_its_header(tmp_path: Path) -> None:
    # must not: a training record printed as a header and indented lines, one a clock, stays a row
    lines = []
    for k in range(1, 21):
        lines += [f"[step={k}/20]", f"  train/loss = {2.0 / k + 0.2:.4f}", "  eta = 0:10:00", "  train/lr = 0.001"]
    path = tmp_path / "blocks.log"
    path.write_text("\n".join(lines) + "\n")
    table = pipeline.load(str(path)).table
    assert table.height == 20 and table[LOSS][-1] == pytest.approx(0.3)
