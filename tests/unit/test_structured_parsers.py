"""Parser details on small inline inputs: values, junk, types, evals, sniffing by content."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.errors import InputError, ParseError
from logdoctor.ingest.parsers import sniff
from logdoctor.ingest.sources import open_source


def _write(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text)
    return str(path)


def test_jsonl_types_junk_and_nonfinite(tmp_path: Path) -> None:
    text = (
        '{"step": 1, "loss": 2.0, "extra": 1}\n'
        '{"step": 2, "loss": 1.9, "extra": {"a": 1}}\n'
        "INFO not json\n"
        '{"step": 3, "loss": "1.8", "extra": [1, 2]}\n'
        '{"step": 4, "loss": NaN}\n'
        '{"step": 5, "loss": Infinity, "x": -Infinity}\n'
    )
    run = pipeline.load(_write(tmp_path, "log.txt", text))
    assert run.meta.format == "jsonl"
    loss = run.table["loss"].to_list()
    assert loss[:3] == [2.0, 1.9, 1.8]
    assert math.isnan(loss[3]) and loss[4] == math.inf
    assert run.table["x"][4] == -math.inf
    assert run.table["line_no"].to_list() == [1, 2, 4, 5, 6]
    assert run.meta.skip_reasons == {"not a JSON object": 1}


def test_jsonl_msswift_fraction_step_nulls_and_giant_line(tmp_path: Path) -> None:
    rows = [
        {"loss": "11.52", "acc": None, "global_step/max_steps": "10/430", "epoch": 0.02},
        {"loss": 9.5, "acc": 0.3, "global_step/max_steps": "20/430", "epoch": 0.05},
        {"eval_loss": 9.0, "global_step/max_steps": "20/430"},
        {
            "log_history": [{"loss": 1.0, "global_step/max_steps": "1/430"}] * 10,
            "pad": "x" * 200_000,
        },
    ]
    run = pipeline.load(_write(tmp_path, "logging.jsonl", "\n".join(json.dumps(r) for r in rows)))
    assert run.table["step"].to_list() == [10, 20]
    assert run.table["loss"].to_list() == [11.52, 9.5]
    assert run.table["acc"][0] is None and run.table["acc"][1] == 0.3
    assert run.meta.total_steps == 430
    assert run.evals["eval_loss"].to_list() == [9.0] and run.evals["step"].to_list() == [20]
    assert "max_steps" not in run.table.columns


def test_jsonl_nested_dicts_flatten_to_canonical_names(tmp_path: Path) -> None:
    rec = {"it": 7, "train": {"loss": 1.25, "lr": 1e-3}, "batch": {"n_seq": 12, "max_len": 700}}
    run = pipeline.load(_write(tmp_path, "a.jsonl", json.dumps(rec) + "\n"))
    row = run.table.row(0, named=True)
    assert (row["step"], row["loss"], row["lr"], row["seqs"], row["len_max"]) == (
        7,
        1.25,
        1e-3,
        12,
        700,
    )


def test_jsonl_without_a_loss_names_the_keys(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.jsonl", '{"step": 1, "reward": 0.5}\n{"step": 2, "reward": 0.7}\n')
    with pytest.raises(ParseError, match="reward"):
        pipeline.load(path)


def test_csv_lightning_rows_are_split(tmp_path: Path) -> None:
    text = (
        "epoch,step,train_loss_step,train_loss_epoch,val_loss\n"
        "0,9,2.5,,\n0,19,2.4,,\n0,19,,,2.6\n0,19,,2.45,\n1,29,2.2,,\n"
    )
    run = pipeline.load(_write(tmp_path, "metrics.csv", text))
    assert run.meta.format == "csv"
    assert run.table["step"].to_list() == [9, 19, 29]
    assert run.table["loss"].to_list() == [2.5, 2.4, 2.2]
    assert run.table["line_no"].to_list() == [2, 3, 6]
    assert run.evals.height == 2
    assert sorted(run.evals["val_loss"].drop_nulls().to_list()) == [2.6]
    assert run.evals["train_loss_epoch"].drop_nulls().to_list() == [2.45]


def test_tsv_and_header_only(tmp_path: Path) -> None:
    run = pipeline.load(_write(tmp_path, "t.tsv", "step\tloss\tacc\n1\t2.0\t0.1\n2\t1.5\t0.2\n"))
    assert run.table["acc"].to_list() == [0.1, 0.2]
    with pytest.raises(ParseError):
        pipeline.load(_write(tmp_path, "h.csv", "step,loss\n"), fmt="csv")


def test_text_with_commas_is_not_csv(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "a.log",
        "Epoch 1, Step: 10, Batch Loss: 2.5, Lr: 0.1\nEpoch 1, Step: 20, Batch Loss: 2.4, Lr: 0.1\n",
    )
    assert sniff(open_source(path)).name == "text"


def test_hf_compact_state_and_summary_entry(tmp_path: Path) -> None:
    state = {
        "epoch": 2.0,
        "global_step": 40,
        "max_steps": 40,
        "log_history": [
            {"step": 20, "loss": 1.0, "epoch": 1.0, "learning_rate": 1e-4},
            {"step": 20, "eval_loss": 1.2, "epoch": 1.0},
            {"step": 40, "loss": 0.8, "epoch": 2.0, "learning_rate": 5e-5},
            {"step": 40, "train_loss": 0.9, "train_runtime": 10.0, "epoch": 2.0},
        ],
    }
    run = pipeline.load(_write(tmp_path, "state.json", json.dumps(state)))
    assert run.meta.format == "hf_trainer_state"
    assert run.table["loss"].to_list() == [1.0, 0.8]
    assert run.table["lr"].to_list() == [1e-4, 5e-5]
    assert (run.meta.steps_per_epoch, run.meta.total_steps) == (20, 40)
    assert run.meta.skip_reasons == {"evaluation record": 1, "run summary record": 1}


def test_mlflow_metrics_folder_and_nested_names(tmp_path: Path) -> None:
    metrics = tmp_path / "run" / "metrics"
    (metrics / "train").mkdir(parents=True)
    (metrics / "train" / "loss").write_text("1 2.0 0\n2 1.5 1\n3 nan 2\n")
    (metrics / "train" / "learning_rate").write_text("1 0.1 0\n3 0.05 2\n")
    (metrics / "val_loss").write_text("3 1.7 2\n")
    for target in (tmp_path / "run", metrics):
        run = pipeline.load(str(target))
        assert run.meta.format == "mlflow"
        assert run.table["step"].to_list() == [0, 1, 2]
        assert run.table["loss"].to_list()[:2] == [2.0, 1.5] and math.isnan(run.table["loss"][2])
        assert run.table["lr"].to_list() == [0.1, None, 0.05]
        assert run.evals["val_loss"].to_list() == [1.7]


def test_plain_directory_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(InputError, match="is a directory"):
        pipeline.load(str(tmp_path))


def test_json_array_of_records(tmp_path: Path) -> None:
    rows = [{"_step": 0, "train/loss": 2.0, "_runtime": 1.5}, {"_step": 1, "train/loss": 1.8}]
    run = pipeline.load(_write(tmp_path, "history.json", json.dumps(rows, indent=2)))
    assert run.meta.format == "jsonl"
    assert run.table["step"].to_list() == [0, 1]
    assert run.table["loss"].to_list() == [2.0, 1.8]


def test_keys_that_normalise_alike_are_merged(tmp_path: Path) -> None:
    text = '{"step": 1, "loss": 2.0, "Line No": 99, "eval loss": 3.0}\n{"step": 2, "loss": 1.5, "eval_loss": 2.5}\n'
    run = pipeline.load(_write(tmp_path, "a.jsonl", text))
    assert run.table["line_no"].to_list() == [1, 2]
    assert run.evals["eval_loss"].to_list() == [3.0, 2.5]
