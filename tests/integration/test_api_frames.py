"""Records in memory give the report their file gives: ``analyze(path)`` and ``analyze`` of a DataFrame
(polars, pandas) or a list of dicts of the same rows agree on everything but where the rows came from,
on every fixture and real log that JSON lines, CSV or trainer_state.json hold."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import polars as pl
import pytest

import logdoctor
from logdoctor.errors import ParseError
from logdoctor.ingest.parsers import sniff
from logdoctor.ingest.sources import open_source

REPO = Path(__file__).resolve().parents[2]
RECORD_FORMATS = ("jsonl", "csv", "hf_trainer_state")


def _format(path: Path) -> str | None:
    try:
        return sniff(open_source(str(path))).name
    except logdoctor.LogdoctorError:
        return None


def _record_logs(folder: Path) -> list[Path]:
    files = [
        p
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and not p.name.endswith(".truth.json")
        and p.suffix in (".jsonl", ".csv", ".json", ".log", ".txt")
        and p.stat().st_size < 4_000_000
    ]
    return [p for p in files if _format(p) in RECORD_FORMATS]


FIXTURE_LOGS = _record_logs(REPO / "fixtures")
#: real logs of ../shared/reallogs in those formats (tests/integration/test_reallogs_structured.py reads them)
REAL_LOGS = [
    "hf_trainer_state_lyric_lora_diverged.json",
    "hf_trainer_state_star_multihead_acc.json",
    "hf_trainer_state_whisper_ja_5k.json",
    "hf_trl_sft_trainer_state_tinyllama_num_tokens.json",
    "hf_trl_trainer_state_mistral7b_medical_gbl_false.json",
    "keras_csvlogger_brats_unet.log",
    "lightning_metrics_slm_wikitext103_v0.csv",
    "llamafactory_codeup_sft_math_trainer_state_gbl_false.json",
    "llamafactory_trainer_log_360_pairwise_acc.jsonl",
    "llamafactory_trainer_log_luojiu7b_cpt.jsonl",
    "llamafactory_trainer_log_mistral_translator_total_tokens0.jsonl",
    "llamafactory_trainer_log_qwen7b_medical_overfit.jsonl",
    "llamafactory_trainer_log_resume_dupwriters.jsonl",
    "msswift_logging_dup_lines.jsonl",
    "msswift_sft_logging.jsonl",
]


def _rows(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file, as ``json.loads`` reads each line (a notebook's way)."""
    rows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            rows.append(obj)
    return rows


def _held(path: Path) -> dict[str, object]:
    """The same rows as a notebook holds them, by kind."""
    fmt = _format(path)
    if fmt == "hf_trainer_state":
        state = json.loads(path.read_text(encoding="utf-8"))
        members = {k: state.get(k) for k in ("max_steps", "global_step", "epoch")}
        return {"dict": state, "TrainerState": SimpleNamespace(log_history=state["log_history"], **members)}
    if fmt == "csv":
        return {"polars": pl.read_csv(path, infer_schema_length=None), "pandas": pd.read_csv(path)}
    rows = _rows(path)
    return {
        "list": rows,
        "polars": pl.DataFrame(rows, infer_schema_length=None, strict=False),
        "pandas": pd.DataFrame(rows),
    }


def _without_origin(doc: dict[str, Any]) -> dict[str, Any]:
    """A report document less where its rows came from: the source block and line numbers."""
    doc = {k: v for k, v in doc.items() if k != "source"}
    for f in [*doc["findings"], *(f for r in doc["runs"] for f in r["findings"])]:
        f.pop("line")
    for r in doc["runs"]:
        r.pop("first_line"), r.pop("last_line")
    return doc


def _has_nan_loss(path: Path) -> bool:
    """A NaN loss pandas cannot tell from a missing one (it writes both as NaN)."""
    table = logdoctor.analyze(str(path)).table
    return bool(table["loss"].is_nan().any())


def _check(path: Path, alone: Path) -> None:
    """``alone``: an empty folder. The file is analysed there, without the files beside it in its run
    folder (an Ultralytics ``args.yaml`` states the plan): rows in memory have no folder."""
    copy = alone / path.name
    copy.write_bytes(path.read_bytes())
    expected = _without_origin(logdoctor.analyze(str(copy)).to_dict())
    for kind, held in _held(path).items():
        if kind == "pandas" and _has_nan_loss(path):
            # pandas cannot tell a NaN loss from a missing one: the report (or, with no loss left, the
            # refusal) says so
            try:
                notes = logdoctor.analyze(held).to_dict()["source"]["notes"]
            except ParseError as e:
                notes = [str(e).split("; ", 1)[-1]]
            assert any(n.startswith("pandas writes a missing value as NaN") for n in notes)
            continue
        report = logdoctor.analyze(held)
        assert _without_origin(report.to_dict()) == expected, kind


@pytest.mark.parametrize("path", FIXTURE_LOGS, ids=[str(p.relative_to(REPO)) for p in FIXTURE_LOGS])
def test_a_fixtures_rows_in_memory_give_its_report(path: Path, tmp_path: Path) -> None:
    _check(path, tmp_path)


def test_every_kind_of_record_log_is_covered() -> None:
    assert {_format(p) for p in FIXTURE_LOGS} == set(RECORD_FORMATS) and len(FIXTURE_LOGS) > 40


@pytest.mark.reallogs
@pytest.mark.parametrize("name", REAL_LOGS)
def test_a_real_logs_rows_in_memory_give_its_report(name: str, reallogs_dir: Path, tmp_path: Path) -> None:
    _check(reallogs_dir / name, tmp_path)


def test_a_real_trainer_state_object_is_read_as_its_file() -> None:
    transformers = pytest.importorskip("transformers")
    path = REPO / "fixtures" / "formats" / "hf_trainer_state.json"
    state = transformers.TrainerState.load_from_json(str(path))
    from_file = _without_origin(logdoctor.analyze(str(path)).to_dict())
    assert _without_origin(logdoctor.analyze(state).to_dict()) == from_file


def test_a_log_history_without_its_state_has_no_plan() -> None:
    """The list alone does not say max_steps: the report reads no planned end (the state's does)."""
    path = REPO / "fixtures" / "formats" / "hf_trainer_state.json"
    state = json.loads(path.read_text(encoding="utf-8"))
    assert logdoctor.analyze(state).structure.planned == state["max_steps"]
    alone = logdoctor.analyze(state["log_history"])
    assert alone.structure.planned is None and alone.path == "records"


# --- W&B histories: the W&B reader's counters -------------------------------------------------------
def _wandb_history(n: int = 600, evals_every: int = 50) -> list[dict[str, Any]]:
    """Rows as W&B's ``run.history()`` gives an HF Trainer run: ``_step`` counts log calls (evals
    included), ``train/global_step`` is the trainer's step."""
    rows: list[dict[str, Any]] = []
    for step in range(1, n + 1):
        rows.append(
            {
                "_step": len(rows),
                "_runtime": step * 0.1,
                "_timestamp": 1.7e9 + step * 0.1,
                "train/global_step": step,
                "train/epoch": step / 200,
                "train/loss": 2.0 + math.exp(-step / 100) + 0.01 * math.sin(step),
                "train/learning_rate": 1e-4,
            }
        )
        if step % evals_every == 0:
            rows.append(
                {
                    "_step": len(rows),
                    "_runtime": step * 0.1,
                    "_timestamp": 1.7e9 + step * 0.1,
                    "train/global_step": step,
                    "train/epoch": step / 200,
                    "eval/loss": 2.1,
                }
            )
    return rows


@pytest.mark.parametrize("kind", ["pandas", "polars", "list"])
def test_a_wandb_history_is_stepped_by_the_trainers_step(kind: str) -> None:
    rows = _wandb_history()
    held: object = {"pandas": pd.DataFrame, "polars": pl.DataFrame, "list": list}[kind](rows)
    report = logdoctor.analyze(held)
    steps = report.table["step"].to_list()
    assert steps == list(range(1, 601))  # not _step, which the 12 eval rows pushed ahead
    assert "runtime" not in report.table.columns and "timestamp" not in report.table.columns
    assert report.to_dict()["source"]["skip_reasons"] == {"evaluation record": 12}


def test_a_wandb_history_without_a_trainer_step_is_stepped_by_step() -> None:
    rows = [{"_step": i, "_runtime": i * 0.1, "loss": 3.0 - i / 400} for i in range(400)]
    assert logdoctor.analyze(pd.DataFrame(rows)).table["step"].to_list() == list(range(400))


# --- what pandas cannot say ----------------------------------------------------------------------------
def test_a_pandas_nan_loss_is_read_as_missing_and_said() -> None:
    rows = [{"step": s, "loss": 2.0 - s / 1000 if s < 300 else float("nan"), "lr": 1e-4} for s in range(1, 401)]
    as_polars = logdoctor.analyze(pl.DataFrame(rows))
    assert any(f.code == "LD001" for f in as_polars.findings)  # polars keeps NaN apart from missing
    as_pandas = logdoctor.analyze(pd.DataFrame(rows))
    notes = as_pandas.to_dict()["source"]["notes"]
    assert as_pandas.table.height == 299 and any(
        "101 rows without a training loss may be rows whose loss was NaN" in n for n in notes
    )


def test_a_pandas_frame_without_missing_values_gets_no_nan_note() -> None:
    frame = pd.DataFrame({"step": range(1, 301), "loss": [2.0 - s / 1000 for s in range(300)]})
    assert not any("pandas" in n for n in logdoctor.analyze(frame).to_dict()["source"]["notes"])


def test_pandas_shapes_a_notebook_makes() -> None:
    """A step index, numbered columns, timestamps and mixed objects are read, not refused."""
    n = 300
    frame = pd.DataFrame(
        {
            "loss": [2.0 - s / 1000 for s in range(n)],
            7: range(n),
            "when": pd.date_range("2024-01-01", periods=n, freq="min"),
            "tag": ["a", 1, None] * (n // 3),
        },
        index=pd.Index(range(10, 10 + n), name="step"),
    )
    report = logdoctor.analyze(frame)
    assert report.table["step"].to_list() == list(range(10, 10 + n))
    assert "when" not in report.table.columns  # a date is no metric
    assert logdoctor.analyze(frame.reset_index(drop=True)).table["step"].to_list()[:3] == [1, 2, 3]
    twice = pd.DataFrame([[1, 2.0], [2, 1.9]], columns=["loss", "loss"])
    with pytest.raises(logdoctor.InputError, match="repeated column names"):
        logdoctor.analyze(twice)


def test_a_frame_without_a_step_is_numbered_as_a_step_less_log_is() -> None:
    frame = pl.DataFrame({"loss": [2.0 - s / 1000 for s in range(300)]})
    report = logdoctor.analyze(frame)
    assert report.table["step"].to_list() == list(range(1, 301))
    assert any(n.startswith("no step column: step = the number") for n in report.to_dict()["source"]["notes"])


def test_a_lazy_frame_and_a_users_line_no_column() -> None:
    frame = pl.DataFrame({"step": range(1, 301), "loss": [2.0 - s / 1000 for s in range(300)], "line_no": [99] * 300})
    report = logdoctor.analyze(frame.lazy())
    assert report.table["line_no"].to_list()[:3] == [1, 2, 3]
