"""A log written with logdoctor.emit goes through ingest (pipeline.load) with every field intact."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.emit import BatchRecorder, JsonlWriter, format_line
from logdoctor.ingest.parsers import PARSERS
from tests.reports import report_of

STEPS = 40


def write_log(path: Path, jsonl: bool) -> list[dict[str, object]]:
    """A seeded run logged with the helpers; returns what was written, per step."""
    rng = np.random.default_rng(0)
    lengths = rng.integers(8, 900, size=5000)
    rec = BatchRecorder(lengths)
    rows: list[dict[str, object]] = []
    writer = JsonlWriter(path) if jsonl else None
    with path.open("a") as text:
        for step in range(1, STEPS + 1):
            rec.record(rng.choice(lengths.size, int(rng.integers(4, 20)), replace=False))
            batch = rec.pop()
            metrics = {
                "acc": float(rng.random()),
                "lr": 3e-4 * step / STEPS,
                "grad_norm": float(rng.lognormal()),
                "tok_s": 25100.0 + step,
                "epoch": step // 20,
            }
            loss = float(rng.normal(4.0, 0.2)) if step != 17 else float("nan")
            if writer:
                writer.write(step, loss, total=1000, batch=batch, **metrics)
            else:
                text.write(format_line(step, loss, total=1000, batch=batch, **metrics) + "\n")
            rows.append({"step": step, "loss": loss, **metrics, **batch})
    if writer:
        writer.close()
    return rows


def expected_frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    frame = pl.DataFrame(rows).rename({"tok_s": "throughput", "n_seq": "seqs"})
    return frame.with_columns(pl.exclude("step", "batch_fp").cast(pl.Float64))


NUMERIC = [
    "loss",
    "acc",
    "lr",
    "grad_norm",
    "throughput",
    "epoch",
    "seqs",
    "tokens",
    "len_mean",
    "len_min",
    "len_max",
    "pad_frac",
]


def check_numbers(run_table: pl.DataFrame, want: pl.DataFrame) -> None:
    assert run_table["step"].to_list() == want["step"].to_list()
    for col in NUMERIC:
        got, exp = run_table[col].to_numpy(), want[col].to_numpy()
        assert np.array_equal(got, exp, equal_nan=True), col  # exact: the format is lossless


def load(path: Path, jsonl: bool) -> pl.DataFrame:
    assert not jsonl or "jsonl" in {p.name for p in PARSERS}, "the JSONL parser is registered"
    return pipeline.load(str(path)).table


@pytest.mark.parametrize("jsonl", [False, True], ids=["text", "jsonl"])
def test_round_trip_numbers(tmp_path: Path, jsonl: bool) -> None:
    path = tmp_path / ("train.jsonl" if jsonl else "train.log")
    want = expected_frame(write_log(path, jsonl))
    check_numbers(load(path, jsonl), want)


@pytest.mark.parametrize("jsonl", [False, True], ids=["text", "jsonl"])
def test_round_trip_batch_fp_as_string(tmp_path: Path, jsonl: bool) -> None:
    path = tmp_path / ("train.jsonl" if jsonl else "train.log")
    want = expected_frame(write_log(path, jsonl))
    table = load(path, jsonl)
    assert table["batch_fp"].dtype == pl.String
    assert table["batch_fp"].to_list() == want["batch_fp"].to_list()


def test_fixture_truth_matches_its_fingerprints(fixtures_dir: Path) -> None:
    """The emit fixtures' recurring fractions, recomputed from the log text alone."""
    import json
    import re

    for name, want_label in (("emit_static", "static"), ("emit_bucketed", "healthy")):
        truth = json.loads((fixtures_dir / f"{name}.truth.json").read_text())
        rows = re.findall(r"epoch=(\d+) .*batch_fp=([0-9a-f]{16})", (fixtures_dir / f"{name}.log").read_text())
        first = {fp for ep, fp in rows if ep == "0"}
        later = [fp in first or any(fp == f2 and e2 < ep for e2, f2 in rows) for ep, fp in rows if ep != "0"]
        assert truth["batching"] == want_label
        assert truth["recurring_fraction"] == pytest.approx(sum(later) / len(later), abs=1e-4)
    static = json.loads((fixtures_dir / "emit_static.truth.json").read_text())
    assert static["recurring_fraction"] == 1.0


def test_fingerprinted_logs_get_the_right_verdict(fixtures_dir: Path) -> None:
    """Issue 9: fingerprints make static composition certain, and rule it out for a bucketed shuffle."""

    static = report_of(str(fixtures_dir / "emit_static.log")).verdict
    assert static.batching == "static" and static.evidence["recurrence_kind"] == "fingerprint"
    assert static.evidence["recurrence_fraction"] == 1.0 and static.evidence["recurrence_chance"] == 0.0
    healthy = report_of(str(fixtures_dir / "emit_bucketed.log")).verdict
    assert healthy.batching == "healthy" and healthy.evidence["recurrence_kind"] == "fingerprint"
    assert float(healthy.evidence["recurrence_fraction"]) < 0.05  # type: ignore[arg-type]
