"""Structure details: epoch length from running totals, counters by name, HF console resume lines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from logdoctor import pipeline
from logdoctor.ingest.parsers.lines import read_lines
from logdoctor.ingest.parsers.markers import Markers, scan_markers
from logdoctor.renderers.jsonreport import report_dict
from logdoctor.renderers.rows import structure_phrases
from logdoctor.structure.counters import is_cumulative_name
from logdoctor.structure.epochlen import describe_length, run_length

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "structure"


def _run(epochs: list[int], iters: list[int], **cols: Sequence[float]) -> pl.DataFrame:
    return pl.DataFrame({"epoch": [float(e) for e in epochs], "step": iters, **cols})


def test_running_total_gives_the_epoch_end_not_the_last_logged_iter() -> None:
    # batch 4, 1,030 examples per epoch -> 258 steps (last batch partial); logged every 100 iters
    iters = [100, 200, 100, 200, 100]
    epochs = [0, 0, 1, 1, 2]
    cum = [400, 800, 1030 + 400, 1030 + 800, 2060 + 400]
    got = run_length(_run(epochs, iters, cum_examples=cum))
    assert (got.steps, got.source, got.column, got.rate) == (258, "cumulative_counter", "cum_examples", 4.0)
    assert "running total cum_examples" in describe_length(got)


def test_a_global_step_beside_the_per_epoch_step_is_a_global_counter() -> None:
    got = run_length(_run([0, 0, 1, 1], [50, 100, 50, 100], global_step=[50, 100, 173, 223]))
    assert (got.steps, got.source) == (123, "global_counter")


def test_without_a_running_total_the_largest_step_is_a_lower_bound() -> None:
    got = run_length(_run([0, 0, 1, 1], [50, 100, 50, 100], loss=[3.0, 2.9, 2.8, 2.7]))
    assert (got.steps, got.source, got.column) == (100, "largest_step", None)
    assert "lower bound" in describe_length(got)


def test_a_total_with_a_varying_rate_or_a_reset_tells_nothing() -> None:
    rng = np.random.default_rng(3)
    tokens = np.cumsum(rng.integers(500, 900, 6)).astype(float).tolist()  # batches of varying length
    assert run_length(_run([0, 0, 0, 1, 1, 1], [1, 2, 3, 1, 2, 3], cum_tokens=tokens)).source == "largest_step"
    reset = [100.0, 200.0, 100.0, 200.0]  # the total starts again at the epoch boundary
    assert run_length(_run([0, 0, 1, 1], [100, 200, 100, 200], cum_examples=reset)).source == "largest_step"


@pytest.mark.parametrize(
    "name",
    [
        "cum_examples",
        "cumulative_tokens",
        "num_input_tokens_seen",
        "consumed_samples",
        "total_tokens",
        "global_step",
        "examples_seen",
        "cum_src_tokens",
    ],
)
def test_running_totals_by_name(name: str) -> None:
    assert is_cumulative_name(name)


@pytest.mark.parametrize("name", ["loss", "tokens", "total_loss", "cum_loss", "seqs", "total_flos", "lr"])
def test_metrics_are_not_running_totals(name: str) -> None:
    assert not is_cumulative_name(name)


def test_cumulative_counter_is_not_a_metric_of_the_structure() -> None:
    path = FIXTURES / "per_epoch_cumulative.log"
    truth = json.loads(path.with_name(path.name + ".truth.json").read_text())
    st = pipeline.load(str(path)).meta.structure
    assert st is not None and "loss" in st.metrics
    assert not set(truth["not_metrics"]) & set(st.metrics)


def _markers(text: str) -> Markers:
    return scan_markers(read_lines(text.encode()))


def test_hf_resume_lines_4x_and_5x() -> None:
    text = (
        "step 1 loss 3.0\n"
        "  Continuing training from checkpoint, will skip to saved global_step\n"
        "  Continuing training from epoch 1\n"
        "  Continuing training from global step 400\n"
        "  Will skip the first 1 epochs then the first 0 batches in the first epoch.\n"
        "  Resuming training from checkpoint with epoch 2 and global step 600\n"
        "  Fast-forwarding the dataloader past 2 epochs and 0 batches to resume from the exact training state.\n"
    )
    m = _markers(text)
    assert m.resume_lines == (2, 3, 4, 5, 6, 7)
    assert m.resume_steps == ((4, 400), (6, 600))


def test_starting_training_is_no_resume_line() -> None:
    m = _markers("Starting training\n***** Running training *****\n  Num Epochs = 4\n{'loss': 1.0, 'epoch': 0.1}\n")
    assert m.resume_lines == () and m.resume_steps == ()


def test_hf_fresh_run_has_no_restart_and_a_resumed_one_keeps_earlier_steps() -> None:
    fresh = pipeline.load(str(FIXTURES / "hf_fresh_start.log"))
    assert fresh.meta.resumes == 0
    resumed = pipeline.load(str(FIXTURES / "hf_resume_4x.log"))
    assert resumed.meta.resumes == 1
    steps = resumed.table["step"].to_list()
    assert steps[:3] == [10, 20, 30] and steps[-1] == 800  # steps 10-200 of the first attempt kept


def test_the_detail_fixtures_are_what_their_seeded_generator_writes(tmp_path: Path) -> None:
    from fixtures import gen_struct_details

    for written in gen_struct_details.generate(tmp_path):
        assert written.read_bytes() == (FIXTURES / written.name).read_bytes(), written.name


def test_a_resumed_run_without_a_boundary_of_its_own_keeps_the_measured_length() -> None:
    from logdoctor.structure.steps import per_epoch_counter

    nan = float("nan")
    table = pl.DataFrame(
        {
            "line_no": list(range(1, 10)),
            "epoch": [0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 3.0],
            "step": [100, 200, 100, 200, 100, 200, 100, 200, 100],  # back to epoch 1 iter 100 at row 5: a resume
            "cum_examples": [100.0, 200.0, 350.0, 450.0, nan, nan, nan, nan, nan],  # 250 per epoch, then not logged
        }
    )
    got = per_epoch_counter(table)
    assert got is not None
    assert got[0]["step"].to_list() == [100, 200, 350, 450, 350, 450, 600, 700, 850]
    assert (got[1].steps, got[1].source, got[1].column) == (250, "cumulative_counter", "cum_examples")


def _stepped(tmp_path: Path, between: list[str]) -> Path:
    lines = [f"step={s} loss={3 - 0.001 * s:.4f}" for s in range(10, 301, 10)]
    lines += [*between, *(f"step={s} loss={3 - 0.001 * s:.4f}" for s in range(310, 601, 10))]
    path = tmp_path / "run.log"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    "line",
    [
        "  Continuing training from checkpoint, will skip to saved global_step",
        "  Continuing training from global step 300",
        "  Will skip the first 1 epochs then the first 100 batches in the first epoch.",
        "  Fast-forwarding the dataloader past 1 epochs and 100 batches to resume from the exact training state.",
    ],
)
def test_a_resume_line_is_a_restart_when_the_counter_runs_on(line: str, tmp_path: Path) -> None:
    """Killed right after saving checkpoint-300 and resumed from it: the step never goes back."""
    st = pipeline.load(str(_stepped(tmp_path, [line]))).meta.structure
    assert st is not None
    assert [(r.step, r.kind) for r in st.restarts] == [(310, "resume_line")]


def test_starting_training_mid_log_is_no_restart(tmp_path: Path) -> None:
    st = pipeline.load(str(_stepped(tmp_path, ["Starting training"]))).meta.structure
    assert st is not None and st.restarts == ()


def test_resume_offsets_end_at_a_fresh_run_header() -> None:
    from logdoctor.structure.steps import resume_offsets

    table = pl.DataFrame({"line_no": [2, 3, 6, 7, 10, 11]})
    # header at 4, resume "global step 200" at 5; a fresh run's header at 8 (no resume after it)
    got = resume_offsets(table, ((5, 200),), (1, 4, 8))
    assert got.tolist() == [0, 0, 200, 200, 0, 0]


def _epoch_counter_log(tmp_path: Path, total: bool) -> Path:
    """Three epochs of 130 steps, an iteration counter within each epoch logged every 50 steps."""
    lines = []
    for ep in range(3):
        for it in range(50, 131, 50):
            extra = f" cum_examples={ep * 130 + it}" if total else ""
            lines.append(f"epoch={ep} iter={it} loss={3 - 0.1 * ep - 0.001 * it:.4f}{extra}")
    path = tmp_path / ("with_total.log" if total else "counter_only.log")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("total", "steps", "source"), [(True, 130, "cumulative_counter"), (False, 100, "largest_step")]
)
def test_steps_per_epoch_source_of_a_per_epoch_counter(tmp_path: Path, total: bool, steps: int, source: str) -> None:
    """Where the steps per epoch of a per-epoch step counter came from is said once: in the JSON
    key, in the report's epochs line (a lower bound says "at least"), in one note."""
    report = pipeline.analyze(pipeline.load(str(_epoch_counter_log(tmp_path, total))))
    st = report.run.meta.structure
    assert st is not None and (st.steps_per_epoch, st.epoch_source) == (steps, "two_level")
    assert st.steps_per_epoch_source == source
    assert report_dict(report)["structure"]["steps_per_epoch_source"] == source
    assert len([n for n in report.run.meta.notes if n.startswith("steps per epoch")]) == 1
    epochs = structure_phrases(st, "")[1]
    assert ("at least 100 steps each" in epochs) == (source == "largest_step"), epochs
    assert ("running total" in epochs) == total, epochs


@pytest.mark.parametrize(("given", "source"), [(None, "epoch_changes"), (40, "given")])
def test_steps_per_epoch_source_of_an_epoch_column(given: int | None, source: str) -> None:
    run = pipeline.load(str(FIXTURES.parent / "example.log"), steps_per_epoch=given)
    st = run.meta.structure
    assert st is not None and st.steps_per_epoch_source == source


def test_a_structure_fact_without_a_source_never_prints_none(tmp_path: Path) -> None:
    # a reader may know the steps per epoch or a plan without naming where from (Coqui's `STEP: i/N`):
    # the report says the fact and no source, never "from None"
    import dataclasses

    from logdoctor.renderers.rows import ending_phrase

    report = pipeline.analyze(pipeline.load(str(_epoch_counter_log(tmp_path, True))))
    st = report.run.meta.structure
    assert st is not None and st.steps_per_epoch
    bare = dataclasses.replace(st, epoch_source=None, steps_per_epoch_source=None, planned=1000, planned_source=None)
    epochs = structure_phrases(bare, "")[1]
    assert "None" not in epochs and "steps each)" in epochs, epochs
    ending = ending_phrase(bare)
    assert "None" not in ending and "planned 1,000 steps" in ending, ending
