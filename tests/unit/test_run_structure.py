"""Run structure (structure/steps.py, restarts.py, layout.py) against seeded fixtures with known answers."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.cli import main
from logdoctor.ingest.parsers.lines import read_lines
from logdoctor.ingest.parsers.markers import scan_markers
from logdoctor.renderers.jsonreport import report_dict
from logdoctor.structure.layout import metric_columns

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "structure"
LOGS = sorted(p for p in FIXTURES.iterdir() if not p.name.endswith(".truth.json"))


def _truth(path: Path) -> dict[str, object]:
    return json.loads(path.with_name(path.name + ".truth.json").read_text())


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_fixture_structure_matches_truth(path: Path) -> None:
    truth = _truth(path)
    st = pipeline.load(str(path)).meta.structure
    assert st is not None
    for key in ("rows", "first_step", "last_step", "stride", "epochs", "epoch_source"):
        assert getattr(st, key) == truth[key], key
    for key in ("planned", "finished", "grad_accum"):
        if key in truth:
            assert getattr(st, key) == truth[key], key
    if truth["steps_per_epoch"] is None:
        assert st.steps_per_epoch is None
    else:
        assert st.steps_per_epoch == pytest.approx(truth["steps_per_epoch"], rel=0.02)
    got = [{"step": r.step, "kind": r.kind} for r in st.restarts]
    assert got == truth["restarts"]


def test_epochs_only_in_finished_lines_give_a_healthy_verdict() -> None:
    path = FIXTURES / "epoch_finished.log"
    report = pipeline.analyze(pipeline.load(str(path)))
    assert report.verdict.batching == _truth(path)["verdict"] == "healthy"


def test_keras_append_restarts_are_resumes_without_divergence() -> None:
    run = pipeline.load(str(FIXTURES / "keras_csv_append.csv"))
    assert run.meta.resumes == 3
    report = pipeline.analyze(run)
    assert not [f for f in report.findings if f.code in ("LD002", "LD301", "LD004")]
    assert report.verdict.cause != "a resume that rewrote earlier steps"


def test_coqui_takes_global_step_and_not_the_running_average() -> None:
    path = FIXTURES / "coqui_blocks.log"
    run = pipeline.load(str(path))
    assert run.table["loss"][0] == pytest.approx(_truth(path)["loss_first"])
    assert "current_lr" in run.table.columns


def test_json_structure_block_and_text_line(capsys: pytest.CaptureFixture[str]) -> None:
    report = pipeline.analyze(pipeline.load(str(FIXTURES / "hf_console.log")))
    doc = report_dict(report)
    assert doc["format_version"] == 4
    assert doc["structure"]["planned_source"] == "header"
    assert doc["structure"]["restarts"] == [{"step": 10, "kind": "appended_run", "source": "marker_lines"}]
    main(["analyze", str(FIXTURES / "hf_console.log"), "--format", "markdown"])
    out = capsys.readouterr().out
    assert "60 rows every 10 steps, steps 10-600 of 800 planned" in out
    ending = "stopped before its plan, no error printed; planned 800 steps (the log's header), reached 600"
    assert f"| ending | {ending} |" in out


def test_markers_kinds_and_resume_lines() -> None:
    text = (
        b"Loading checkpoint shards: 100%\n"
        b"INFO Loading checkpoint from /ckpt/latest-unsharded...\n"
        b"-----> epoch 4\n"
        b"step 1 loss 2.0\n"
        b"Epoch 3:  34%|###4      | 50/146 [00:10<00:20]\n"
    )
    m = scan_markers(read_lines(text))
    assert m.resume_lines == (2,)
    assert m.epoch_values == (4,) and m.epoch_source == "marker_lines"
    bars = scan_markers(read_lines(b"Epoch 3:  34%|#  | 50/146\rEpoch 3:  35%|#  | 51/146\n"))
    assert bars.epoch_source == "progress_bar" and bars.epoch_values == (3,)


def test_counters_clocks_and_sparse_fields_are_not_metrics() -> None:
    t = pl.DataFrame(
        {
            "step": [1, 2, 3, 4],
            "loss": [1.0, 0.9, 0.8, 0.7],
            "number_of_nan_iterations": [0.0, 0.0, 0.0, 0.0],
            "remaining_time": [3.0, 2.0, 2.0, 1.0],
            "rare": [1.0, None, None, None],
            "grad_norm": [1.0, 1.1, 1.2, 1.0],
        }
    )
    assert metric_columns(t) == ("grad_norm", "loss")


def test_map_naming_an_absent_field_is_exit_2_listing_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "a.jsonl"
    log.write_text("".join(json.dumps({"step": s, "loss": 1.0 / s}) + "\n" for s in range(1, 9)))
    assert main(["analyze", str(log), "--map", "loss=misspelled"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "keys seen: loss, step" in err[0]


def test_text_values_nan_word_and_durations(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    log.write_text(
        "".join(
            f" iteration {i}/ 100 | lm loss: {1 + 1 / i:.3f} | number of nan iterations: 0 |"
            f" remaining_time 3h 35m {i}s |\n"
            for i in range(1, 11)
        )
    )
    run = pipeline.load(str(log))
    assert run.table["number_of_nan_iterations"].to_list() == [0.0] * 10
    assert "remaining_time" not in run.table.columns
    assert run.meta.structure is not None and run.meta.structure.metrics == ("loss",)


def test_epoch_column_and_marker_lines_agreement_is_noted() -> None:
    run = pipeline.load(str(FIXTURES / "epoch_banners.log"))
    assert "epochs: the epoch column and 5 epoch marker lines agree" in run.meta.notes
    assert run.meta.structure is not None and run.meta.structure.epoch_source == "column"


def test_verdict_evidence_epochs_agree_with_the_structure(tmp_path: Path) -> None:
    # 4 epochs of 100 steps logged every 5 steps; the fractional (HF) epoch ends at exactly 4.0,
    # which closes the fourth epoch and starts no fifth
    rows = [{"step": s, "loss": 2.0 - s / 1000 + 0.01 * (s % 7), "epoch": s / 100} for s in range(5, 401, 5)]
    log = tmp_path / "fractional_epochs.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = pipeline.analyze(pipeline.load(str(log)))
    assert report.meta.structure is not None and report.meta.structure.epochs == 4
    assert report.verdict.evidence["epochs"] == 4


def test_stride_regular_irregular_and_epoch_boundaries() -> None:
    import numpy as np

    from logdoctor.structure.layout import stride_of

    # every 200 batches of a 2983-batch epoch: the gap across the boundary is shorter
    steps = np.array([e * 2983 + b for e in range(3) for b in range(200, 2983, 200)])
    epochs = np.array([e for e in range(3) for _ in range(200, 2983, 200)], dtype=float)
    assert stride_of(steps, epochs) == 200
    # Keras progress lines every 1-6 batches: no logging interval
    rng = np.random.default_rng(0)
    assert stride_of(np.cumsum(rng.choice([1, 2, 3, 6], size=300, p=[0.1, 0.6, 0.2, 0.1]))) is None
    assert stride_of(np.arange(10, 1001, 10)) == 10


def test_writers_flushing_in_chunks_are_no_appended_runs(tmp_path: Path) -> None:
    # two ranks flush 5-step chunks in turn: rank 1's first chunk goes back to step 1
    lines = []
    for start in range(1, 201, 5):
        for rank in (0, 1):
            lines += [json.dumps({"step": s, "loss": 2.0 + 0.01 * rank}) for s in range(start, start + 5)]
    log = tmp_path / "chunks.jsonl"
    log.write_text("\n".join(lines) + "\n")
    run = pipeline.load(str(log))
    assert run.meta.structure is not None and run.meta.structure.restarts == ()
    assert run.n_steps == 200 and run.meta.nonmonotonic_steps == 40


def test_a_step_line_without_a_loss_is_a_row_not_analysed(tmp_path: Path) -> None:
    # Megatron: every batch of iterations 1-10 skipped for fp16 overflow, so no lm loss at 10
    head = " iteration       10/    1000 | learning rate: 0.000E+00 | number of skipped iterations:  10 |"
    lines = [head] + [
        f" iteration {i:8d}/    1000 | learning rate: 1.0E-04 | lm loss: {9 - i / 100:.6E} |"
        f" number of skipped iterations:   0 | number of nan iterations:   0 |"
        for i in range(20, 210, 10)
    ]
    log = tmp_path / "megatron.out"
    log.write_text("\n".join(lines) + "\n")
    run = pipeline.load(str(log))
    st = run.meta.structure
    assert st is not None and (st.rows, st.first_step, st.last_step, st.stride) == (20, 10, 200, 10)
    assert run.n_steps == 19 and int(run.table["step"][0]) == 20
    assert st.planned == 1000 and st.finished is False
