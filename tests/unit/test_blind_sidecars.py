"""bench/blind/corpus.py: a manifest row's sidecars (the files a trainer writes beside its log) are fetched into
the log's run folder, and the log is analysed there."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.blind.corpus import log_path, rows, run_dir, sidecars


def _row(path: str, side: str) -> dict[str, str]:
    return {"name": "x_results.csv", "path": path, "sidecars": side, "repo": "o/r", "commit": "0" * 40}


def test_every_manifest_sidecar_is_beside_its_log() -> None:
    named = [r for r in rows() if sidecars(r)]
    assert named  # the results.csv / results.txt rows name their args.yaml / opt.yaml
    writers = ("args.yaml", "opt.yaml", "hyp.yaml", "config.yaml", "config.py", "hyperparams.yaml")
    for r in named:
        assert all(Path(p).name in writers for p in sidecars(r))


def test_a_sidecar_outside_the_log_folder_is_refused() -> None:
    with pytest.raises(ValueError, match="not beside"):
        sidecars(_row("runs/train/exp1/results.csv", "runs/train/exp2/opt.yaml"))


def test_the_run_folder_copy_is_analysed_when_fetched(tmp_path: Path) -> None:
    row = _row("runs/train/exp1/results.csv", "runs/train/exp1/opt.yaml")
    (tmp_path / row["name"]).write_text("epoch,loss\n")
    assert log_path(tmp_path, row) == tmp_path / row["name"]  # sidecars not fetched yet
    run_dir(tmp_path, row).mkdir()
    (run_dir(tmp_path, row) / "results.csv").write_text("epoch,loss\n")
    assert log_path(tmp_path, row) == run_dir(tmp_path, row) / "results.csv"
    no_side = _row("runs/train/exp1/results.csv", "")
    assert log_path(tmp_path, no_side) == tmp_path / row["name"]
