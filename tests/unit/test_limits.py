"""The key budget: at most MAX_KEYS metric names per log, the canonical ones always, a notice when it bites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor import pipeline
from logdoctor.errors import InputError
from logdoctor.ingest import limits
from logdoctor.ingest.limits import MAX_KEYS


def test_keep_keys_at_the_edge() -> None:
    counts = {f"k{i}": i for i in range(MAX_KEYS)}
    assert limits.keep_keys(counts) == (set(counts), None)
    counts["rare"] = 0
    counts["step"] = 0
    kept, note = limits.keep_keys(counts, always={"step"})
    assert len(kept) == MAX_KEYS and "step" in kept and "rare" not in kept and "k0" not in kept
    assert note == f"kept the {MAX_KEYS} most frequent of {MAX_KEYS + 2} metric names (the others are dropped)"


def test_past_the_budget_names_rarer_than_min_share_go() -> None:
    counts = {"step": 1000, "loss": 1000, **{f"k{i}": 1 for i in range(MAX_KEYS)}, "lr": 10, "acc": 9}
    kept, note = limits.keep_keys(counts, always={"step", "loss"}, records=1000)
    assert kept == {"step", "loss", "lr"}  # 10 of 1,000 records is the 1% floor; 9 is under it
    assert note == f"kept the 3 most frequent of {MAX_KEYS + 4} metric names (the others are dropped)"
    assert limits.keep_keys({"a": 1, "b": 1}, records=1000) == ({"a", "b"}, None)  # within the budget


def _text_log(path: Path, names: int, lines: int = 400) -> Path:
    path.write_text("".join(f"step {i} loss={2 - i / 1000:.4f} k{i % names}_metric={i % 7}\n" for i in range(lines)))
    return path


@pytest.mark.parametrize("names", [MAX_KEYS - 2, MAX_KEYS - 1])
def test_text_keys_changing_every_line_keep_steps_and_say_so(names: int, tmp_path: Path) -> None:
    run = pipeline.load(str(_text_log(tmp_path / "a.log", names)))
    assert run.table.height == 400
    kept = [c for c in run.table.columns if c.endswith("_metric")]
    notes = [n for n in run.meta.notes if "metric names" in n]
    if names + 2 <= MAX_KEYS:  # step and loss are names too
        assert len(kept) == names and not notes
    else:  # past the budget, each name on 1-2 of 400 lines is under MIN_SHARE: only step and loss stay
        assert kept == [] and notes == ["kept the 2 most frequent of 257 metric names (the others are dropped)"]


@pytest.mark.parametrize("names", [MAX_KEYS - 2, MAX_KEYS - 1])
def test_jsonl_keys_changing_every_line_keep_steps_and_say_so(names: int, tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(
        "".join(json.dumps({"step": i, "loss": 2 - i / 1000, f"m{i % names}": 1.0}) + "\n" for i in range(400))
    )
    run = pipeline.load(str(path))
    assert run.table.height == 400 and run.table["loss"].null_count() == 0
    notes = [n for n in run.meta.notes if "metric names" in n]
    assert bool(notes) == (names + 2 > MAX_KEYS)


def test_csv_columns_are_budgeted(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    n = MAX_KEYS + 10
    path.write_text(
        "step,loss,"
        + ",".join(f"m{j}" for j in range(n))
        + "\n"
        + "".join(f"{i},{2 - i / 100}," + ",".join("1" for _ in range(n)) + "\n" for i in range(60))
    )
    run = pipeline.load(str(path))
    assert run.table.height == 60
    assert any(f"of {n + 2} metric names" in note for note in run.meta.notes)


@pytest.mark.reallogs
def test_no_real_log_reaches_the_key_budget(reallogs_dir: Path) -> None:
    logs = [p for p in sorted(reallogs_dir.iterdir()) if p.suffix not in (".md", ".tsv")]
    widest = 0
    for path in logs:
        run = pipeline.load(str(path))
        assert not any("metric names" in n for n in run.meta.notes), path.name
        widest = max(widest, run.table.width + run.evals.width)
    assert widest * 4 < MAX_KEYS  # the default stands far above the widest real log


@pytest.mark.parametrize("names", [MAX_KEYS - 2, MAX_KEYS - 1])
def test_trainer_state_keys_changing_every_entry_are_budgeted(names: int, tmp_path: Path) -> None:
    history = [{"step": i, "loss": 2 - i / 1000, f"m{i % names}": 0.5} for i in range(1, 401)]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": history, "global_step": 400}))
    run = pipeline.load(str(path))
    assert run.table.height == 400
    notes = [n for n in run.meta.notes if "metric names" in n]
    assert bool(notes) == (names + 2 > MAX_KEYS)


def test_key_budget_over_batches_keeps_the_always_names() -> None:
    budget = limits.KeyBudget(lambda k: k == "loss", limit=3)
    first = budget.prune([{"loss": 1, "a": 1}, {"loss": 2, "a": 2}])
    assert first == [{"loss": 1, "a": 1}, {"loss": 2, "a": 2}] and budget.note is None
    second = budget.prune([{"loss": 3, "b": 1, "c": 2, "d": 3}])
    assert second == [{"loss": 3, "b": 1}] and budget.note is not None  # a (2) beats b, c, d (1 each)


def test_a_chunked_read_keeps_the_budget_over_all_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.ingest import memory

    path = _text_log(tmp_path / "k.log", names=3000, lines=3000)
    monkeypatch.setattr(memory, "in_memory_limit", lambda total: 1)
    monkeypatch.setattr(memory, "chunk_bytes", lambda total: 16 * 1024)  # ~8 chunks, each keeps 256 names
    monkeypatch.setattr(memory, "row_budget", lambda total: 10**9)
    run = pipeline.load(str(path))
    assert run.table.height == 3000
    assert len([c for c in run.table.columns if c.endswith("_metric")]) <= MAX_KEYS


def test_a_listing_within_its_limit_is_kept_whole() -> None:
    found = [f"run-{i}" for i in range(5)]
    assert limits.within("wandb", found, 5, "W&B runs") == found


def test_a_listing_past_its_limit_is_refused_with_its_count_never_cut() -> None:
    with pytest.raises(
        InputError, match=r"wandb: 1,001 W&B runs, more than the 1,000 one input may stand for: name fewer"
    ):
        limits.within("wandb", list(range(1001)), 1000, "W&B runs")


@pytest.mark.parametrize("kind", ["wandb", "tensorboard"])
def test_a_run_folder_past_the_run_limit_is_a_one_line_error(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder of more runs than the limit: the command says how many and exits 2 (it analysed
    only the first 1,000 without a word before)."""
    from logdoctor.cli import main
    from logdoctor.ingest import runfolders
    from logdoctor.ingest.parsers import tensorboard

    root = tmp_path / "logs"
    for i in range(4):
        if kind == "wandb":
            run = root / f"run-2026120{i}_000000-id{i}"
            (run / "files").mkdir(parents=True)
            (run / f"run-id{i}.wandb").write_bytes(b"")
        else:
            (root / f"v{i}").mkdir(parents=True)
            (root / f"v{i}" / "events.out.tfevents.1.host").write_bytes(b"")
    monkeypatch.setattr(runfolders, "MAX_RUNS", 3)
    monkeypatch.setattr(tensorboard, "MAX_RUNS", 3)
    assert main(["analyze", str(root)]) == 2
    err = capsys.readouterr().err
    assert "4 " in err and "more than the 3 one input may stand for" in err and "Traceback" not in err
