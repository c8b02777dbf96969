"""Static micro-batches under gradient accumulation: judged on each part's fingerprint (micro_fp).

The merged fingerprint of a step (``batch_fp``, the union of its micro-batches) recomposes every
epoch when static micro-batches are paired anew, so only the parts can show static composition.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from logdoctor import pipeline
from logdoctor.diagnosis import recurrence as rc
from logdoctor.emit.lines import format_line
from logdoctor.emit.stats import batch_stats, merge

SAMPLES, MICRO, ACCUM, EPOCHS = 800, 8, 2, 6


def _micro_batches(lengths: np.ndarray, rng: np.random.Generator, static: list[np.ndarray] | None) -> list[np.ndarray]:
    """Static: the same sorted-packed micro-batches in a new order; else re-formed within
    length buckets every epoch (the healthy fix)."""
    if static is not None:
        return [static[i] for i in rng.permutation(len(static))]
    order = np.argsort(lengths + rng.random(lengths.size) * 40, kind="stable")  # noisy buckets
    parts = [order[i : i + MICRO] for i in range(0, order.size, MICRO)]
    return [parts[i] for i in rng.permutation(len(parts))]


def _write_log(path: Path, strategy: str, seed: int, with_micro: bool = True) -> None:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(8, 160, SAMPLES)
    order = np.argsort(lengths, kind="stable")
    static = [order[i : i + MICRO] for i in range(0, SAMPLES, MICRO)] if strategy == "static" else None
    lines, step = [], 0
    for epoch in range(EPOCHS):
        parts = _micro_batches(lengths, rng, static)
        for g in range(0, len(parts), ACCUM):
            group = parts[g : g + ACCUM]
            rec = merge([batch_stats(lengths[p]) for p in group], group)
            if not with_micro:
                rec.pop("micro_fp", None)
            step += 1
            loss = 3.0 * np.exp(-step / 400) + 0.05 * rng.standard_normal()
            lines.append(format_line(step, round(float(loss), 4), batch=rec, epoch=epoch))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _verdict(path: Path) -> tuple[str, dict[str, object]]:
    report = pipeline.analyze(pipeline.load(str(path)))
    assert report.verdict is not None
    return report.verdict.batching, dict(report.verdict.evidence)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_static_micro_batches_are_found_from_their_parts(tmp_path: Path, seed: int) -> None:
    log = tmp_path / "static_ga.log"
    _write_log(log, "static", seed)
    batching, evidence = _verdict(log)
    assert batching == "static"
    assert evidence["recurrence_columns"] == "micro_fp" and evidence["recurrence_fraction"] == 1.0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_recomposed_micro_batches_are_not_static(tmp_path: Path, seed: int) -> None:
    log = tmp_path / "bucketed_ga.log"
    _write_log(log, "bucketed", seed)
    batching, evidence = _verdict(log)
    assert batching != "static"
    assert evidence["recurrence_columns"] == "micro_fp" and evidence["recurrence_fraction"] < 0.05


def test_without_parts_the_merged_fingerprint_cannot_show_static(tmp_path: Path) -> None:
    """The case micro_fp exists for: the union alone recomposes (what a log without it shows)."""
    log = tmp_path / "static_ga_union.log"
    _write_log(log, "static", 1, with_micro=False)
    batching, evidence = _verdict(log)
    assert batching != "static" and evidence.get("recurrence_columns") != "micro_fp"


def test_rows_without_parts_count_as_one_part(tmp_path: Path) -> None:
    """A step of one micro-batch (the epoch's last, odd one) carries only batch_fp."""
    log = tmp_path / "mixed.log"
    log.write_text(
        "step 1 | loss=2.0 | batch: n_seq=2 batch_fp=aaaaaaaa11111111 micro_fp=bbbbbbbb22222222+cccccccc33333333\n"
        "step 2 | loss=1.9 | batch: n_seq=2 batch_fp=dddddddd44444444\n"
        "step 3 | loss=1.8 | batch: n_seq=2 batch_fp=eeeeeeee55555555 micro_fp=bbbbbbbb22222222+dddddddd44444444\n",
        encoding="utf-8",
    )
    run = pipeline.load(str(log))
    assert run.table["micro_fp"][0] == "bbbbbbbb22222222+cccccccc33333333"
    got = rc.micro_ids(run)
    assert got is not None
    ids, rows = got
    assert rows.tolist() == [0, 0, 1, 2, 2]
    assert ids[1] != ids[0] and ids[2] == ids[4] and ids[0] == ids[3]  # ddd.. is one part in both
